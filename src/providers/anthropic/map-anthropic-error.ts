import { failureFromStatus, ProviderError, type ProviderFailure } from '../provider-error.ts';

/** What an error message may name about the provider, and the secret it must never show. */
export interface ErrorContext {
  providerId: string;
  apiKey?: string;
}

/** undici error codes that mean the provider took too long. */
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']);

const MAX_MESSAGE_LENGTH = 500;

/**
 * A non-2xx answer -> ProviderError, keeping Anthropic's own message
 * (`{type:'error', error:{type, message}}`, https://docs.anthropic.com/en/api/errors).
 * 529 overloaded_error is not a known status and so counts as unavailable.
 */
export function errorFromStatus(status: number, bodyText: string, context: ErrorContext): ProviderError {
  const detail = describeErrorBody(bodyText);
  return new ProviderError(failureFromStatus(status), label(context, `HTTP ${status}${detail ? `: ${detail}` : ''}`), status);
}

/** Thrown by the pure converters when Anthropic's answer does not have the documented shape. */
export class AnthropicFormatError extends Error {
  override readonly name = 'AnthropicFormatError';
}

/** Thrown by the stream converter for an `event: error` or a stream cut before message_stop. */
export class AnthropicStreamInterrupted extends Error {
  override readonly name = 'AnthropicStreamInterrupted';
}

/** A thrown error (network, timeout, abort, bad format, or already a ProviderError) -> ProviderError. */
export function errorFromException(error: unknown, signal: AbortSignal, context: ErrorContext): ProviderError {
  if (error instanceof ProviderError) return error;
  if (error instanceof AnthropicFormatError) return invalidResponse(error.message, context);
  if (error instanceof AnthropicStreamInterrupted) return new ProviderError('unavailable', label(context, error.message));
  // The caller's own abort wins over whatever undici made of it.
  if (signal.aborted) return new ProviderError('cancelled', label(context, 'cancelled by the caller'));
  const failure: ProviderFailure = TIMEOUT_CODES.has(errorCode(error) ?? '') ? 'timeout' : 'unavailable';
  const message = error instanceof Error && error.message ? error.message : String(errorCode(error) ?? error);
  return new ProviderError(failure, label(context, message));
}

export function invalidResponse(detail: string, context: ErrorContext): ProviderError {
  return new ProviderError('invalid_response', label(context, `invalid response: ${detail}`));
}

function label(context: ErrorContext, message: string): string {
  let text = `anthropic provider "${context.providerId}": ${message}`;
  // Some proxies echo the request headers back in their errors.
  if (context.apiKey) text = text.split(context.apiKey).join('[redacted]');
  return text.length > MAX_MESSAGE_LENGTH ? `${text.slice(0, MAX_MESSAGE_LENGTH)}…` : text;
}

function describeErrorBody(bodyText: string): string {
  try {
    return describeError(JSON.parse(bodyText)) ?? bodyText.trim();
  } catch {
    return bodyText.trim();
  }
}

/** `{type:'error', error:{type, message}}` -> "type: message". */
export function describeError(payload: unknown): string | undefined {
  const error = (payload as { error?: { type?: unknown; message?: unknown } } | null)?.error;
  if (typeof error?.message !== 'string') return undefined;
  return typeof error.type === 'string' ? `${error.type}: ${error.message}` : error.message;
}

/** undici puts the code on the error itself; fetch-style wrappers put it on the cause. */
function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause === undefined ? undefined : errorCode(cause);
}
