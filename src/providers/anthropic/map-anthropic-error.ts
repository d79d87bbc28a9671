import { ProviderError } from '../provider-error.ts';
import { transportFailure } from '../upstream-http.ts';

/** Thrown by the pure converters when Anthropic's answer does not have the documented shape. */
export class AnthropicFormatError extends Error {
  override readonly name = 'AnthropicFormatError';
}

/** Thrown by the stream converter for an `event: error` or a stream cut before message_stop. */
export class AnthropicStreamInterrupted extends Error {
  override readonly name = 'AnthropicStreamInterrupted';
}

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

/** `{type:'error', error:{type, message}}` -> "type: message". */
export function describeError(payload: unknown): string | undefined {
  const error = (payload as { error?: { type?: unknown; message?: unknown } } | null)?.error;
  if (typeof error?.message !== 'string') return undefined;
  return typeof error.type === 'string' ? `${error.type}: ${error.message}` : error.message;
}
