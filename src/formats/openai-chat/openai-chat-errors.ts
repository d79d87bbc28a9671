import { ProviderError } from '../../providers/provider-error.ts';
import { isRecord, type OpenAIErrorPayload } from './openai-chat-wire-types.ts';

const MAX_MESSAGE = 500;

/**
 * The message of an error a provider sent inside a 200 answer: `{error: {message, type, code}}`
 * (OpenAI, vLLM, llama.cpp, OpenRouter) or `{error: "text"}` (Hugging Face TGI).
 */
export function describeOpenAIError(payload: OpenAIErrorPayload | null | undefined): string {
  if (typeof payload === 'string') return payload.slice(0, MAX_MESSAGE);
  if (!isRecord(payload)) return 'unknown error';
  const message = typeof payload.message === 'string' ? payload.message : 'unknown error';
  const code = typeof payload.code === 'string' || typeof payload.code === 'number' ? ` (${payload.code})` : '';
  return `${message.slice(0, MAX_MESSAGE)}${code}`;
}

/** A failure reported inside a 200 answer: the provider's side broke, so another one may do better. */
export function providerFailedError(payload: OpenAIErrorPayload | null | undefined): ProviderError {
  return new ProviderError('unavailable', `the provider failed: ${describeOpenAIError(payload)}`);
}

/** An answer that is not the documented shape. */
export function invalidResponse(detail: string): ProviderError {
  return new ProviderError('invalid_response', `invalid OpenAI-compatible response: ${detail}`);
}
