import { Agent, request, errors, type Dispatcher } from 'undici';
import type { ProviderConfig } from '../config/schema.ts';
import { ProviderError, failureFromStatus, parseRetryAfter } from './provider-error.ts';

/** A keep-alive pool per provider; timeouts apply to headers and to each gap in the body. */
export function createUpstreamAgent(config: ProviderConfig): Agent {
  return new Agent({
    connections: config.connections,
    headersTimeout: config.timeoutMs,
    bodyTimeout: config.timeoutMs,
    keepAliveTimeout: 30_000,
  });
}

/** A transport-level failure (or our own abort) as a ProviderError. */
export function transportFailure(error: unknown, signal: AbortSignal): ProviderError {
  if (error instanceof ProviderError) return error;
  if (signal.aborted) return new ProviderError('cancelled', 'the request was cancelled');
  if (error instanceof errors.HeadersTimeoutError || error instanceof errors.BodyTimeoutError || error instanceof errors.ConnectTimeoutError) {
    return new ProviderError('timeout', 'the provider did not answer in time');
  }
  const code = (error as { code?: string }).code ?? (error as Error).name;
  return new ProviderError('unavailable', `connection to the provider failed (${code})`);
}

/** Most of an upstream error body we show: providers put the useful part first. */
const MAX_MESSAGE = 500;

const KEY_LOOKING = /\b(?:sk|svc|key|api|token)[-_][A-Za-z0-9_-]{6,}/gi;

/** Providers sometimes echo the credential they rejected; no client may ever see it. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let redacted = text;
  for (const secret of secrets) if (secret.length >= 6) redacted = redacted.split(secret).join('[redacted]');
  return redacted.replace(KEY_LOOKING, '[redacted]');
}

/** The provider's own error message from a JSON error body (OpenAI and Anthropic both use error.message). */
function providerMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const message = typeof parsed.error === 'object' ? parsed.error?.message : (parsed.error ?? parsed.message);
    if (typeof message === 'string') return message.slice(0, MAX_MESSAGE);
  } catch {
    // Not JSON: fall through to the raw text.
  }
  return text.slice(0, MAX_MESSAGE).trim() || 'no error message';
}

/** Header values that carry credentials (Bearer tokens, x-api-key...). */
function secretsIn(headers: Record<string, string>): string[] {
  return Object.values(headers).map((value) => value.replace(/^Bearer\s+/i, ''));
}

/**
 * POST a JSON body upstream. Resolves with a 2xx response; every other outcome is thrown as
 * a ProviderError carrying the provider's message (never our credentials).
 */
export async function postJson(
  agent: Agent,
  url: string,
  headers: Record<string, string>,
  body: unknown,
  signal: AbortSignal,
): Promise<Dispatcher.ResponseData> {
  let response: Dispatcher.ResponseData;
  try {
    response = await request(url, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal,
    });
  } catch (error) {
    throw transportFailure(error, signal);
  }
  if (response.statusCode >= 200 && response.statusCode < 300) return response;
  let text = '';
  try {
    text = await response.body.text();
  } catch {
    // The body is only for the message.
  }
  throw new ProviderError(
    failureFromStatus(response.statusCode),
    `HTTP ${response.statusCode}: ${redactSecrets(providerMessage(text), secretsIn(headers))}`,
    response.statusCode,
    parseRetryAfter(response.headers['retry-after']),
  );
}

/** Read a whole JSON body, classifying failures. */
export async function readJson(response: Dispatcher.ResponseData, signal: AbortSignal): Promise<unknown> {
  let text: string;
  try {
    text = await response.body.text();
  } catch (error) {
    throw transportFailure(error, signal);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new ProviderError('invalid_response', 'the provider sent a body that is not JSON');
  }
}

/** The response body as an async iterable of chunks, with transport failures classified. */
export async function* bodyChunks(response: Dispatcher.ResponseData, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of response.body) yield chunk as Uint8Array;
  } catch (error) {
    throw transportFailure(error, signal);
  }
}
