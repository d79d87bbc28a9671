import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { urlToHttpOptions } from 'node:url';
import type { ProviderConfig } from '../config/schema.ts';
import { ProviderError, failureFromStatus, parseRetryAfter } from './provider-error.ts';
import { endWithPieces, jsonPieces, type JsonPieces } from '../lib/json-pieces.ts';

/**
 * Keep-alive connection pools of one provider (node:http; https when its base URL is). Node's own
 * client: undici held about 10 MiB more at start and 30 MiB more under load, for no less CPU.
 */
export interface UpstreamPool {
  readonly timeoutMs: number;
  agentFor(url: URL): http.Agent;
  /** Closes idle and busy connections; the gateway calls it once requests have drained. */
  close(): Promise<void>;
}

/** A keep-alive pool per provider; the timeout applies to the connection, the headers and each gap in the body. */
export function createUpstreamAgent(config: ProviderConfig): UpstreamPool {
  // Idle connections close after 30 s of silence, before most servers drop them.
  const options = { keepAlive: true, maxSockets: config.connections, timeout: 30_000, scheduling: 'lifo' as const };
  let plain: http.Agent | undefined;
  let secure: https.Agent | undefined;
  return {
    timeoutMs: config.timeoutMs,
    agentFor: (url) => (url.protocol === 'https:' ? (secure ??= new https.Agent(options)) : (plain ??= new http.Agent(options))),
    close: async () => {
      plain?.destroy();
      secure?.destroy();
    },
  };
}

/** The provider went quiet for longer than its timeout (no connection, no headers, or a gap in the body). */
class UpstreamTimeout extends Error {
  override readonly name = 'UpstreamTimeout';
}

/** A transport-level failure (or our own abort) as a ProviderError. */
export function transportFailure(error: unknown, signal: AbortSignal): ProviderError {
  if (error instanceof ProviderError) return error;
  if (signal.aborted) return new ProviderError('cancelled', 'the request was cancelled');
  if (error instanceof UpstreamTimeout) return new ProviderError('timeout', 'the provider did not answer in time');
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

/** A provider's headers with a call's trace context (`traceparent`) added; the same object when tracing is off. */
export function withTraceHeaders(headers: Record<string, string>, trace: Record<string, string> | undefined): Record<string, string> {
  return trace ? { ...headers, ...trace } : headers;
}

/** A 2xx answer whose body is still to be read. */
export interface UpstreamResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: IncomingMessage;
}

const targets = new WeakMap<URL, ReturnType<typeof urlToHttpOptions>>();

/** Host, port and path of a provider URL, read once (each provider keeps its URL). */
function targetOf(url: URL): ReturnType<typeof urlToHttpOptions> {
  let target = targets.get(url);
  if (target === undefined) targets.set(url, (target = urlToHttpOptions(url)));
  return target;
}

/** Sends the request; resolves with the response once its headers arrived. */
function send(pool: UpstreamPool, url: URL, headers: Record<string, string>, payload: JsonPieces, signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? https : http).request({
      ...targetOf(url),
      method: 'POST',
      agent: pool.agentFor(url),
      headers: { 'content-type': 'application/json', ...headers, 'content-length': payload.bytes },
    });
    // The signal stops the request and its response, as http.request's own `signal` option does,
    // with one listener instead of that option's end-of-stream watch (~4 µs a request, measured).
    const abort = () => request.destroy(new Error('the request was cancelled'));
    if (signal.aborted) abort();
    else {
      signal.addEventListener('abort', abort, { once: true });
      request.once('close', () => signal.removeEventListener('abort', abort));
    }
    let response: IncomingMessage | undefined;
    request.setTimeout(pool.timeoutMs, () => {
      const timeout = new UpstreamTimeout('the provider did not answer in time');
      // Once the headers came, the error belongs to the body being read.
      response?.destroy(timeout);
      request.destroy(timeout);
    });
    request.on('error', reject);
    request.on('response', (answer) => {
      response = answer;
      resolve(answer);
    });
    // Written once the request has its socket: before that, Node queues the headers, the body and
    // an empty end marker and sends them with one writev, about twice the CPU of the one write made
    // on a socket that is there. A multi-megabyte prompt is written a piece at a time (json-pieces.ts).
    request.once('socket', () => void endWithPieces(request, payload.pieces));
  });
}

/** The whole body as text (events rather than an async iterator: this runs for every answer). */
function readText(body: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const pieces: Buffer[] = [];
    body.on('data', (piece: Buffer) => pieces.push(piece));
    body.on('end', () => resolve(pieces.length === 1 ? pieces[0]!.toString('utf8') : Buffer.concat(pieces).toString('utf8')));
    body.on('error', reject);
    // A connection closed before the end, without an error of its own.
    body.on('close', () => {
      if (!body.complete) reject(new Error('the provider closed the connection before the end of the body'));
    });
  });
}

/**
 * POST a JSON body upstream. Resolves with a 2xx response; every other outcome is thrown as
 * a ProviderError carrying the provider's message (never our credentials).
 */
export async function postJson(
  pool: UpstreamPool,
  url: URL,
  headers: Record<string, string>,
  body: unknown,
  signal: AbortSignal,
  jsonTexts?: ReadonlyMap<string, Uint8Array>,
): Promise<UpstreamResponse> {
  let response: IncomingMessage;
  try {
    response = await send(pool, url, headers, await jsonPieces(body, jsonTexts), signal);
  } catch (error) {
    throw transportFailure(error, signal);
  }
  const statusCode = response.statusCode ?? 0;
  if (statusCode >= 200 && statusCode < 300) return { statusCode, headers: response.headers, body: response };
  let text = '';
  try {
    text = await readText(response);
  } catch {
    // The body is only for the message.
  }
  throw new ProviderError(
    failureFromStatus(statusCode),
    `HTTP ${statusCode}: ${redactSecrets(providerMessage(text), secretsIn(headers))}`,
    statusCode,
    parseRetryAfter(response.headers['retry-after']),
  );
}

/** Read a whole JSON body, classifying failures. */
export async function readJson(response: UpstreamResponse, signal: AbortSignal): Promise<unknown> {
  let text: string;
  try {
    text = await readText(response.body);
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
export async function* bodyChunks(response: UpstreamResponse, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of response.body) yield chunk as Uint8Array;
  } catch (error) {
    throw transportFailure(error, signal);
  }
}

/**
 * Closes the upstream connection when the body was not read to its end (an error, a consumer
 * that stopped early); once it was, the connection goes back to the pool for the next call.
 */
export function discardBody(response: UpstreamResponse): void {
  const body = response.body;
  if (body.readableEnded) return;
  // Every byte arrived but some were left unread: reading them frees the connection.
  if (body.complete) {
    body.resume();
    return;
  }
  // An early close is reported as an 'error' event that nobody is left to hear.
  body.on('error', () => {});
  body.destroy();
}
