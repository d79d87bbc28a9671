import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { SseWriter } from './sse-writer.ts';

/** Where a streamed answer's events go: server-sent events on an HTTP response, or text frames on a socket. */
export interface EventWriter {
  readonly closed: boolean;
  /** Queues encoded events; undefined when the client keeps up, else a promise of the moment it drained. */
  write(text: string): Promise<void> | undefined;
  /** Sends what is queued and ends the answer. */
  end(): void;
}

/** What the chat pipeline reads of its request and how it answers: an HTTP request, or one turn on a Responses socket. */
export interface ChatExchange {
  readonly body: unknown;
  readonly headers: IncomingHttpHeaders;
  readonly requestId: string;
  readonly log: FastifyBaseLogger;
  /** Begins a streamed answer; `headers` go with it where the transport has headers. */
  openStream(headers: Record<string, string>): EventWriter;
  /** Sends a whole answer. */
  sendBody(body: unknown, headers: Record<string, string>): void;
}

/** The exchange of an HTTP request: JSON in, JSON or server-sent events out. */
export function httpExchange(request: FastifyRequest, reply: FastifyReply): ChatExchange {
  return {
    body: request.body,
    headers: request.headers,
    requestId: request.requestId,
    log: request.log,
    openStream(headers) {
      reply.hijack();
      const writer = new SseWriter(reply.raw);
      writer.open({ ...(reply.getHeaders() as Record<string, string>), ...headers });
      return writer;
    },
    sendBody: (body, headers) => void reply.headers(headers).send(body),
  };
}
