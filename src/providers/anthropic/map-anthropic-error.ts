import { AnthropicFormatError, AnthropicStreamInterrupted } from '../../formats/anthropic-messages/anthropic-format-errors.ts';
import { ProviderError } from '../provider-error.ts';
import { transportFailure } from '../upstream-http.ts';

/**
 * Anything thrown while reading an answer -> ProviderError. HTTP statuses (529 overloaded
 * included, as unavailable) are classified by postJson before this point.
 * https://docs.anthropic.com/en/api/errors
 */
export function toProviderError(error: unknown, signal: AbortSignal): ProviderError {
  if (error instanceof ProviderError) return error;
  // The caller's own abort wins over whatever the pipeline made of it.
  if (signal.aborted) return transportFailure(error, signal);
  if (error instanceof AnthropicFormatError) return new ProviderError('invalid_response', `invalid Anthropic response: ${error.message}`);
  if (error instanceof AnthropicStreamInterrupted) return new ProviderError('unavailable', error.message);
  return transportFailure(error, signal);
}
