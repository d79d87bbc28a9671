import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { anthropicFormat } from './anthropic-format.ts';
import { AnthropicPromptCache } from './anthropic-prompt-cache.ts';
import { openAiFormat } from './openai-format.ts';
import { defaultReply, resolveReply, type ScriptedReply } from './scripted-reply.ts';
import { serializeEvent, type WireEvent, type WireFormat } from './wire-format.ts';

export type { ScriptedReply, ScriptedToolCall } from './scripted-reply.ts';

/** One request as the fake received it. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON, or the raw text when the body was not JSON. */
  body: unknown;
}

/** A local stand-in for an OpenAI-compatible and an Anthropic provider, over real HTTP. */
export interface FakeUpstream {
  /** `http://127.0.0.1:PORT`; the OpenAI base URL is `${url}/v1`, the Anthropic one is `url`. */
  readonly url: string;
  /** Every request received, oldest first. */
  readonly requests: RecordedRequest[];
  /** Responses whose client went away before the fake finished them. */
  readonly abortedCount: number;
  /** TCP connections accepted so far; with keep-alive, fewer than requests. */
  readonly connectionCount: number;
  /** Queues replies for requests whose `model` field is `model`; used in order, then the default. */
  script(model: string, ...replies: ScriptedReply[]): void;
  /** Resolves once `abortedCount` reaches `count`; rejects after `timeoutMs`. */
  waitForAborted(count?: number, timeoutMs?: number): Promise<void>;
  /** Forgets scripts, recorded requests and the aborted and connection counts. */
  reset(): void;
  /** Stops listening and destroys every open connection, hanging ones included. */
  close(): Promise<void>;
}

/** Starts a fake upstream on 127.0.0.1 and a random port. */
export async function startFakeUpstream(): Promise<FakeUpstream> {
  const fake = new FakeUpstreamServer();
  await fake.listen();
  return fake;
}

const FORMATS: ReadonlyMap<string, WireFormat> = new Map([
  [openAiFormat.path, openAiFormat],
  [anthropicFormat.path, anthropicFormat],
]);

class FakeUpstreamServer implements FakeUpstream {
  readonly requests: RecordedRequest[] = [];
  private readonly server: Server;
  private readonly scripts = new Map<string, ScriptedReply[]>();
  /** The Anthropic side's prompt cache: what breakpoints of earlier requests wrote. */
  private readonly promptCache = new AnthropicPromptCache();
  // Ends every pending delay when the fake closes, so no timer keeps the test process alive.
  private readonly closing = new AbortController();
  // Responses the fake destroyed on purpose; their closing is not a client abort.
  private readonly destroyedByFake = new WeakSet<ServerResponse>();
  private aborted = 0;
  private connections = 0;
  private abortWaiters: Array<{ count: number; resolve: () => void }> = [];
  private port = 0;

  constructor() {
    // Every paused reply listens to it: dozens at once when a test sends requests in parallel.
    setMaxListeners(0, this.closing.signal);
    this.server = createServer((request, response) => {
      this.trackAbort(response);
      this.handle(request, response).catch(() => this.destroy(response));
    });
    this.server.on('connection', () => this.connections++);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get abortedCount(): number {
    return this.aborted;
  }

  get connectionCount(): number {
    return this.connections;
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
  }

  script(model: string, ...replies: ScriptedReply[]): void {
    const queue = this.scripts.get(model) ?? [];
    queue.push(...replies);
    this.scripts.set(model, queue);
  }

  waitForAborted(count = 1, timeoutMs = 2_000): Promise<void> {
    if (this.aborted >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.abortWaiters = this.abortWaiters.filter((waiter) => waiter.resolve !== done);
        reject(new Error(`fake upstream: ${this.aborted} aborted connections after ${timeoutMs} ms, wanted ${count}`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        resolve();
      };
      this.abortWaiters.push({ count, resolve: done });
    });
  }

  reset(): void {
    this.scripts.clear();
    this.promptCache.clear();
    this.requests.length = 0;
    this.aborted = 0;
    this.connections = 0;
  }

  async close(): Promise<void> {
    this.closing.abort();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const raw = await readBody(request);
    const body = parseJson(raw);
    const path = new URL(request.url ?? '/', 'http://fake').pathname;
    this.requests.push({ method: request.method ?? '', path, headers: request.headers, body: body ?? raw });

    const format = FORMATS.get(path);
    if (!format) return sendJson(response, 404, { error: { message: `fake upstream: no route ${request.method} ${path}` } });
    if (request.method !== 'POST') return sendJson(response, 405, format.errorBody(405, `Method ${request.method} not allowed`));
    if (!isObject(body)) return sendJson(response, 400, format.errorBody(400, 'The request body is not valid JSON.'));
    const invalid = format.validate(request.headers, body);
    if (invalid) return sendJson(response, 400, format.errorBody(400, invalid));

    const model = body.model as string;
    const reply = this.scripts.get(model)?.shift() ?? defaultReply(model);
    if (reply.hang) return;
    if (reply.headerDelayMs) await this.pause(reply.headerDelayMs);
    if (reply.until) await reply.until;
    const headers = { ...format.responseHeaders(), ...reply.headers };
    if (reply.status !== undefined && reply.status >= 400) {
      const errorBody = reply.errorBody ?? format.errorBody(reply.status);
      return sendJson(response, reply.status, errorBody, headers);
    }
    const resolved = resolveReply(this.withCacheUsage(reply, body, format), model, body, format);
    if (body.stream === true) return this.stream(response, format.streamEvents(resolved, body), reply, format, headers);
    if (reply.malformed) return sendText(response, 200, '{"id":"msg_broken","content":[{"type":"te', headers);
    return sendJson(response, reply.status ?? 200, format.body(resolved, body), headers);
  }

  /** An Anthropic reply whose script sets no cache counts reports what the prompt cache read and wrote. */
  private withCacheUsage(reply: ScriptedReply, body: Record<string, unknown>, format: WireFormat): ScriptedReply {
    if (format !== anthropicFormat || reply.usage?.cached !== undefined || reply.usage?.cacheWrite !== undefined) return reply;
    const { cached, cacheWrite } = this.promptCache.account(body);
    if (cached === 0 && cacheWrite === 0) return reply;
    // Never more than the whole prompt (which counts the system blocks joined, the cache each one).
    const prompt = reply.usage?.prompt ?? format.countPromptTokens(body);
    const read = Math.min(cached, prompt);
    return { ...reply, usage: { ...reply.usage, prompt, cached: read, cacheWrite: Math.min(cacheWrite, prompt - read) } };
  }

  private async stream(
    response: ServerResponse,
    events: WireEvent[],
    reply: ScriptedReply,
    format: WireFormat,
    headers: Record<string, string>,
  ): Promise<void> {
    response.writeHead(reply.status ?? 200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      ...headers,
    });
    let contentSent = 0;
    for (const [index, event] of events.entries()) {
      if (index > 0 && reply.chunkDelayMs) await this.pause(reply.chunkDelayMs);
      if (response.destroyed) return;
      if (event.content) {
        if (reply.dieAfterChunks !== undefined && contentSent >= reply.dieAfterChunks) return this.destroy(response);
        if (reply.errorAfterChunks !== undefined && contentSent >= reply.errorAfterChunks) {
          response.end(serializeEvent(format.streamErrorEvent()));
          return;
        }
        if (reply.malformed) {
          // Half of a JSON object never parses: the outer brace is never closed.
          response.end(serializeEvent({ event: event.event, data: event.data.slice(0, Math.floor(event.data.length / 2)) }));
          return;
        }
        contentSent++;
      }
      response.write(serializeEvent(event));
    }
    response.end();
  }

  private pause(milliseconds: number): Promise<void> {
    return sleep(milliseconds, undefined, { signal: this.closing.signal });
  }

  /** Drops the connection like a crashed upstream, after what was already written reaches the client. */
  private destroy(response: ServerResponse): void {
    this.destroyedByFake.add(response);
    // destroy() would also discard writes still buffered in the socket; destroySoon() flushes them first.
    if (response.socket) response.socket.destroySoon();
    else response.destroy();
  }

  private trackAbort(response: ServerResponse): void {
    response.on('close', () => {
      if (response.writableFinished || this.destroyedByFake.has(response) || this.closing.signal.aborted) return;
      this.aborted++;
      const ready = this.abortWaiters.filter((waiter) => waiter.count <= this.aborted);
      this.abortWaiters = this.abortWaiters.filter((waiter) => waiter.count > this.aborted);
      for (const waiter of ready) waiter.resolve();
    });
  }
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  sendText(response, status, text, headers);
}

function sendText(response: ServerResponse, status: number, text: string, headers: Record<string, string>): void {
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  response.end(text);
}
