import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Test-only: a local HTTP server that replays recorded provider answers byte for byte and
 * records what it was sent, so adapter tests go through the real HTTP client and parsers.
 */

/** One answer to one request, as the provider sent it. */
export interface FixtureReply {
  /** Default 200. */
  status?: number;
  headers?: Record<string, string>;
  /** The body exactly as sent: a `.json` fixture, or the raw SSE bytes of a `.chunks.txt` one. */
  body: string;
  /** Write the body in pieces of this many bytes (splitting events and characters), instead of at once. */
  pieceBytes?: number;
  /** Send only this many bytes of the body, then hold the connection open without ending it. */
  holdAfterBytes?: number;
  /** Never answer: no status line, no headers. */
  hang?: boolean;
}

/** One request as the server received it. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON, or the raw text when the body was not JSON. */
  body: unknown;
  /** The client's port: requests with the same one came over the same connection. */
  remotePort?: number;
}

export interface FixtureServer {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  readonly requests: ReceivedRequest[];
  /** TCP connections accepted; with keep-alive, fewer than requests. */
  readonly connectionCount: number;
  /** Answers the client closed before the server finished them. */
  readonly abortedCount: number;
  /** Answers written to their end. */
  readonly finishedCount: number;
  /** Queues answers for the next requests, in order; a request with none queued gets a 500. */
  reply(...replies: FixtureReply[]): void;
  /** Resolves once `abortedCount` reaches `count`; rejects after `timeoutMs`. */
  waitForAborted(count?: number, timeoutMs?: number): Promise<void>;
  /** Forgets queued replies, requests and counters. */
  reset(): void;
  /** Stops listening and destroys every open connection, held ones included. */
  close(): Promise<void>;
}

/** The raw bytes of a fixture file, e.g. `loadFixture(new URL('./__fixtures__/', import.meta.url), 'name.chunks.txt')`. */
export function loadFixture(directory: URL, file: string): string {
  return readFileSync(new URL(file, directory), 'utf8');
}

/** A `.chunks.txt` fixture served as an event stream. */
export function sseReply(body: string, options: Omit<FixtureReply, 'body'> = {}): FixtureReply {
  return { ...options, headers: { 'content-type': 'text/event-stream; charset=utf-8', ...options.headers }, body };
}

/** A JSON body (a `.json` fixture's text, or a value to serialise). */
export function jsonReply(body: unknown, status = 200, headers: Record<string, string> = {}): FixtureReply {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) };
}

/** Starts a fixture server on 127.0.0.1 and a random port. */
export async function startFixtureServer(): Promise<FixtureServer> {
  const server = new ReplayServer();
  await server.listen();
  return server;
}

class ReplayServer implements FixtureServer {
  readonly requests: ReceivedRequest[] = [];
  private readonly server: Server;
  private queue: FixtureReply[] = [];
  private connections = 0;
  private aborted = 0;
  private finished = 0;
  private closing = false;
  private waiters: Array<{ count: number; resolve: () => void }> = [];
  private port = 0;

  constructor() {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        this.requests.push({
          method: request.method ?? '',
          path: request.url ?? '/',
          headers: request.headers,
          body: parseJson(text) ?? text,
          remotePort: request.socket.remotePort,
        });
        this.track(response);
        void this.answer(response, this.queue.shift());
      });
    });
    this.server.on('connection', () => this.connections++);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }
  get connectionCount(): number {
    return this.connections;
  }
  get abortedCount(): number {
    return this.aborted;
  }
  get finishedCount(): number {
    return this.finished;
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  reply(...replies: FixtureReply[]): void {
    this.queue.push(...replies);
  }

  waitForAborted(count = 1, timeoutMs = 2_000): Promise<void> {
    if (this.aborted >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`fixture server: ${this.aborted} aborted answers after ${timeoutMs} ms, wanted ${count}`)),
        timeoutMs,
      );
      this.waiters.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }

  reset(): void {
    this.queue = [];
    this.requests.length = 0;
    this.connections = 0;
    this.aborted = 0;
    this.finished = 0;
  }

  async close(): Promise<void> {
    this.closing = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async answer(response: ServerResponse, reply: FixtureReply | undefined): Promise<void> {
    if (!reply) {
      response.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"fixture server: no reply queued"}}');
      return;
    }
    if (reply.hang) return;
    const bytes = Buffer.from(reply.body, 'utf8');
    response.writeHead(reply.status ?? 200, reply.headers ?? {});
    const sent = reply.holdAfterBytes === undefined ? bytes : bytes.subarray(0, reply.holdAfterBytes);
    const piece = reply.pieceBytes && reply.pieceBytes > 0 ? reply.pieceBytes : sent.length || 1;
    for (let offset = 0; offset < sent.length; offset += piece) {
      if (response.destroyed) return;
      response.write(sent.subarray(offset, offset + piece));
      // Give each piece its own turn of the event loop, so the client reads them apart.
      if (piece < sent.length) await new Promise((resolve) => setImmediate(resolve));
    }
    if (reply.holdAfterBytes === undefined && !response.destroyed) response.end();
  }

  private track(response: ServerResponse): void {
    response.on('finish', () => this.finished++);
    response.on('close', () => {
      if (response.writableFinished || this.closing) return;
      this.aborted++;
      const ready = this.waiters.filter((waiter) => waiter.count <= this.aborted);
      this.waiters = this.waiters.filter((waiter) => waiter.count > this.aborted);
      for (const waiter of ready) waiter.resolve();
    });
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
