import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { requireScope } from '../../auth/key-authenticator.ts';
import { connectionsAtWork } from '../../close-gateway.ts';
import { GatewayError, toGatewayError } from '../../errors/gateway-error.ts';
import { renderOpenAIError } from '../../errors/render-error.ts';
import { isObject } from '../../formats/read-fields.ts';
import { parseResponsesRequest } from '../../formats/openai-responses/parse-responses-request.ts';
import { turnHeaders } from '../../formats/openai-responses/codex-headers.ts';
import { ResponseChain } from '../../formats/openai-responses/response-chain.ts';
import { responsesWire } from '../../formats/openai-responses/responses-wire.ts';
import { newRequestIds } from '../../lib/ids.ts';
import { requireRequestAllowed } from '../../routing/requested-model.ts';
import type { ApiKeyRecord } from '../../storage/records.ts';
import type { GatewayDeps } from '../gateway-deps.ts';
import { RequestLifecycle, type RequestClient } from '../request-lifecycle.ts';
import { enforceRateLimit } from '../v1-api.ts';
import type { ChatExchange } from './chat-exchange.ts';
import { serveChat } from './chat-pipeline.ts';
import { eventData, SocketFrameWriter } from './socket-frame-writer.ts';

const PATH = '/v1/responses';
const NO_USAGE = { inputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 0, reasoningTokens: 0 };

/**
 * The Responses API over WebSocket on GET /v1/responses, as Codex's built-in OpenAI provider
 * speaks it: the upgrade is authenticated from the same headers as HTTP, then each
 * `response.create` text frame is one request, with its own request id, hold and receipt,
 * served by the same pipeline as POST /v1/responses; its events leave as text frames holding
 * the data of the server-sent events. A `generate: false` frame (Codex's prewarm) is answered
 * at once, with no model called and nothing charged. Frames follow one another: one answers
 * at a time.
 */
export function registerResponsesSocket(app: FastifyInstance, deps: GatewayDeps): void {
  const sockets = new WebSocketServer({ noServer: true, perMessageDeflate: true, maxPayload: deps.config.server.body_limit_bytes });
  const open = new Set<ResponsesSocket>();
  app.server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Node hands the connection over with no error listener: a reset while the key is checked must not throw.
    socket.on('error', () => socket.destroy());
    void accept(deps, request, socket).then((accepted) => {
      if (!accepted) return;
      sockets.handleUpgrade(request, socket, head, (ws) => {
        const session = new ResponsesSocket(deps, ws, request, socket as Socket);
        open.add(session);
        ws.once('close', () => open.delete(session));
      });
    });
  });
  // Shutting down: each socket closes once its answer in flight (if any) has ended.
  app.addHook('preClose', async () => {
    for (const session of open) session.closeWhenIdle();
  });
}

/** Whether an upgrade may proceed; if not, it was answered with the error envelope and closed. */
async function accept(deps: GatewayDeps, request: IncomingMessage, socket: Duplex): Promise<boolean> {
  const { requestId } = newRequestIds();
  try {
    const path = (request.url ?? '').split('?')[0];
    if (path !== PATH) throw new GatewayError('not_found', `No WebSocket at ${path}; the Responses API's is GET ${PATH}.`);
    requireScope(await deps.keys.authenticate(request.headers, request.rawHeaders, Date.now()), 'inference');
    return true;
  } catch (error) {
    refuseUpgrade(socket, toGatewayError(error), requestId);
    return false;
  }
}

function refuseUpgrade(socket: Duplex, error: GatewayError, requestId: string): void {
  const body = JSON.stringify(renderOpenAIError(error, requestId));
  const headers = Object.entries(error.headers).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nx-svc-request-id: ${requestId}\r\n${headers.join('')}connection: close\r\n\r\n${body}`,
  );
}

/** An error as a socket frame: the envelope's `error`, with the status and headers an HTTP answer would have had. */
export function errorFrame(error: GatewayError, requestId: string): string {
  const headers = Object.keys(error.headers).length ? { headers: error.headers } : {};
  return JSON.stringify({ type: 'error', status: error.status, ...renderOpenAIError(error, requestId), ...headers });
}

/** One client's socket: its frames in order, and the responses they may name in `previous_response_id`. */
class ResponsesSocket {
  private readonly chain = new ResponseChain();
  private queue: Promise<void> = Promise.resolve();
  private busy = false;
  private closing = false;

  constructor(
    private readonly deps: GatewayDeps,
    private readonly ws: WebSocket,
    private readonly upgrade: IncomingMessage,
    /** Its connection, kept open by a shutdown while a turn is in progress. */
    private readonly connection: Socket,
  ) {
    ws.on('message', (data: RawData, isBinary: boolean) => {
      // Codex never sends one: a client that does speaks something else.
      if (isBinary) return void ws.close(1003, 'Send response.create frames as JSON text.');
      const text = data.toString();
      this.queue = this.queue.then(() => this.serve(text));
    });
    ws.on('error', () => ws.terminate());
    ws.once('close', () => connectionsAtWork.delete(connection));
  }

  /**
   * From now on the connection is the socket's to close: its last frames and the close frame
   * (deflated, so written later) must leave before it goes, and the shutdown's sweep of idle
   * connections would cut them off.
   */
  closeWhenIdle(): void {
    this.closing = true;
    connectionsAtWork.add(this.connection);
    if (!this.busy) this.ws.close(1001, 'The gateway is shutting down.');
  }

  private async serve(text: string): Promise<void> {
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.busy = true;
    connectionsAtWork.add(this.connection);
    try {
      await this.serveFrame(text);
    } catch (error) {
      this.deps.logger.error({ err: error }, 'responses socket frame failed');
    } finally {
      this.busy = false;
      if (this.closing) this.ws.close(1001, 'The gateway is shutting down.');
      else connectionsAtWork.delete(this.connection);
    }
  }

  private async serveFrame(text: string): Promise<void> {
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      return this.refuse(new GatewayError('invalid_request', 'The frame is not valid JSON.'));
    }
    if (!isObject(frame) || frame.type !== 'response.create') {
      // Codex's acknowledgement of a response it has read: nothing to answer.
      if (isObject(frame) && frame.type === 'response.processed') return;
      return this.refuse(
        new GatewayError(
          'invalid_request',
          'Each frame is a JSON object with "type": "response.create" and the fields of a Responses body.',
          {},
          'type',
        ),
      );
    }
    if (frame.generate === false) return this.prewarm(frame);
    return this.respond(frame);
  }

  private refuse(error: GatewayError): void {
    this.ws.send(errorFrame(error, newRequestIds().requestId));
  }

  /** The key as it stands now: revoked or expired since the upgrade, the frame is refused. */
  private async key(): Promise<ApiKeyRecord> {
    const key = await this.deps.keys.authenticate(this.upgrade.headers, this.upgrade.rawHeaders, Date.now());
    await this.deps.rules.sync(this.deps.keys.version);
    return key;
  }

  /** `generate: false`: the response is created and completed empty, no model called, no hold, no receipt. */
  private async prewarm(frame: Record<string, unknown>): Promise<void> {
    const { requestId } = newRequestIds();
    try {
      const key = await this.key();
      requireScope(key, 'inference');
      const body: Record<string, unknown> = { ...this.chain.resolve(frame), stream: true };
      const parsed = parseResponsesRequest(body, this.upgrade.headers, { prewarm: true });
      requireRequestAllowed(this.deps.catalog, key, parsed.model);
      const id = responsesWire.answerId(requestId);
      const encoder = responsesWire.createEncoder({ id, created: Math.floor(Date.now() / 1000), model: parsed.model }, parsed);
      for (const data of eventData(encoder.start() + encoder.end(NO_USAGE))) this.ws.send(data);
      this.chain.remember(id, body.input, []);
    } catch (error) {
      this.ws.send(errorFrame(toGatewayError(error), requestId));
    }
  }

  /** A turn: one metered request, exactly as a streamed POST /v1/responses. */
  private async respond(frame: Record<string, unknown>): Promise<void> {
    const { requestId, receiptId } = newRequestIds();
    let key: ApiKeyRecord;
    try {
      key = await this.key();
    } catch (error) {
      return void this.ws.send(errorFrame(toGatewayError(error), requestId));
    }
    const turn = new SocketTurn(this.ws, requestId, this.deps.logger);
    const meter = this.deps.meter.begin({ requestId, receiptId, key, endpoint: 'responses', stream: true, startedAt: Date.now() });
    const lifecycle = new RequestLifecycle(meter, turn);
    try {
      await enforceRateLimit(this.deps, key);
    } catch (error) {
      return lifecycle.fail(toGatewayError(error));
    }
    let input: unknown;
    await lifecycle.serve((opened) => {
      const body: Record<string, unknown> = { ...this.chain.resolve(frame), stream: true };
      input = body.input;
      return serveChat(this.deps, responsesWire, opened, turn.exchange(body, turnHeaders(this.upgrade.headers, frame)));
    });
    if (turn.completed) this.chain.remember(turn.completed.id, input, turn.completed.output);
  }
}

/** One turn on a socket: the client its lifecycle answers, and the exchange its pipeline reads and writes. */
class SocketTurn implements RequestClient {
  /** The response this turn completed, for later turns to name. */
  completed: { id: string; output: unknown[] } | null = null;
  private streaming = false;
  private answered = false;
  private unwatch = (): void => {};

  constructor(
    private readonly ws: WebSocket,
    readonly requestId: string,
    readonly log: RequestClient['log'],
  ) {}

  watchDeparture(departed: () => void): void {
    if (this.ws.readyState !== this.ws.OPEN) return departed();
    const closed = () => {
      if (!this.answered) departed();
    };
    this.ws.once('close', closed);
    this.unwatch = () => this.ws.off('close', closed);
  }

  sendError(error: GatewayError): void {
    if (this.streaming || this.answered || this.ws.readyState !== this.ws.OPEN) return;
    this.finish();
    this.ws.send(errorFrame(error, this.requestId));
  }

  /** A stream that broke outside its own handling: the client would wait for its end, so the socket closes. */
  endAnswer(): void {
    if (this.streaming && !this.answered) this.ws.close(1011, 'The answer broke off.');
  }

  exchange(body: Record<string, unknown>, headers: IncomingMessage['headers']): ChatExchange {
    return {
      body,
      headers,
      requestId: this.requestId,
      log: this.log,
      openStream: () => {
        this.streaming = true;
        return new SocketFrameWriter(this.ws, this.seen, this.finish);
      },
      // Every turn streams (its body says stream: true); a whole answer would leave as its completion.
      sendBody: (response) => {
        this.finish();
        this.ws.send(JSON.stringify({ type: 'response.completed', response }));
      },
    };
  }

  private readonly finish = (): void => {
    this.answered = true;
    this.unwatch();
  };

  /** The completed response's output, kept for the turns that name it. */
  private readonly seen = (data: string): void => {
    if (!data.startsWith('{"type":"response.completed"')) return;
    const { response } = JSON.parse(data) as { response: { id: string; output: unknown[] } };
    this.completed = { id: response.id, output: response.output };
  };
}
