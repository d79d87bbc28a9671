import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { MeteredRequest } from '../billing/request-meter.ts';
import { GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import type { ReceiptStatus } from '../storage/records.ts';
import { watchDeparture } from './chat/client-departure.ts';
import { sendErrorBody } from './error-handling.ts';
import type { RequestTrace } from '../telemetry/tracing.ts';
import type { GatewayDeps } from './gateway-deps.ts';

/** How a request's work ended: the receipt it settles with, and what its client is still owed once that is written. */
export interface Ending {
  status: ReceiptStatus;
  /** The failure, for the receipt's error code and, unless `deliver` says otherwise, the error envelope. */
  error: GatewayError | null;
  /** The rest of the answer, sent once the receipt is written (absent: the error envelope, or nothing). */
  deliver?: () => void | Promise<void>;
  /** A stream's last event when the receipt could not be written (absent: the error envelope, if the reply is still open). */
  unrecorded?: (error: GatewayError) => void | Promise<void>;
}

/** The client end of one model request: an HTTP request and its reply, or one turn on a Responses socket. */
export interface RequestClient {
  readonly requestId: string;
  readonly log: FastifyBaseLogger;
  /** Calls `departed` once if the client goes away before its answer has been written: at once when it is gone already. */
  watchDeparture(departed: () => void): void;
  /** The error envelope, unless the answer has begun (a stream ends with its own error event) or the client is gone. */
  sendError(error: GatewayError): void;
  /** An answer that broke outside its own handling: end it rather than leave its client waiting. */
  endAnswer(): void;
}

/** The client of an HTTP request: its reply, the departure of its connection. */
export function httpClient(request: FastifyRequest, reply: FastifyReply): RequestClient {
  return {
    requestId: request.requestId,
    log: request.log,
    watchDeparture: (departed) => watchDeparture(request.raw, reply.raw, departed),
    sendError: (error) => sendErrorBody(request, reply, error),
    endAnswer: () => {
      if (reply.sent && !reply.raw.writableEnded) reply.raw.end();
    },
  };
}

/** The ending of a failure: cancelled when the client left, failed otherwise. */
export function failedWith(error: GatewayError, ending: Omit<Ending, 'status' | 'error'> = {}): Ending {
  return { status: error.code === 'request_cancelled' ? 'cancelled' : 'failed', error, ...ending };
}

/** Nobody is left to answer. */
const departedBeforeWork = (): Ending =>
  failedWith(new GatewayError('request_cancelled', 'The client closed the connection before the request was read.'), { deliver: () => {} });

/**
 * The life of one model request, opened by its /v1 scope's hook once the key is known, before the
 * body is read (so a bad body still gets its receipt): the client's departure is watched from then
 * on, the work places its hold once (reserveWorstCase), and the request settles in one place,
 * `end`, whatever happens: the work's answer or failure, an error before the work began (Fastify's
 * error handler), a client gone before its handler ran, a connection cut by shutdown. The receipt
 * is written before the last bytes of the answer leave, so a client that has its answer finds it.
 */
export class RequestLifecycle {
  private readonly departure = new AbortController();
  private working = false;
  private ended: Promise<void> | null = null;

  constructor(
    readonly meter: MeteredRequest,
    private readonly client: RequestClient,
    /** Its trace, when tracing is on: ended with the receipt. */
    readonly trace: RequestTrace | null = null,
  ) {
    client.watchDeparture(this.departed);
  }

  /** Aborted once the client is gone: the provider call stops, the work ends cancelled. */
  get signal(): AbortSignal {
    return this.departure.signal;
  }

  /** The route's handler: runs the work (unless the client left before it) and ends the request with its outcome. */
  async serve(work: (lifecycle: RequestLifecycle) => Promise<Ending>): Promise<void> {
    if (this.ended) return;
    this.working = true;
    let ending: Ending;
    try {
      ending = await work(this);
    } catch (error) {
      ending = failedWith(this.asGatewayError(error));
    }
    await this.end(ending);
  }

  /** An error before the work began (the rate limit, a body Fastify could not read): the request ends failed with it. */
  fail(error: GatewayError): Promise<void> {
    return this.end(failedWith(error));
  }

  private readonly departed = (): void => {
    this.departure.abort();
    // Before its work began nothing is held: it ends here, cancelled at no cost (Fastify does not
    // read the body of a connection that is gone, so neither handler may ever run). Once the work
    // runs, the abort ends it.
    if (!this.working) void this.end(departedBeforeWork());
  };

  /** The one place a request settles: once, then what its client is still owed. Never rejects. */
  private end(ending: Ending): Promise<void> {
    this.ended ??= this.settleThenDeliver(ending);
    return this.ended;
  }

  private async settleThenDeliver(ending: Ending): Promise<void> {
    let unrecorded: GatewayError | null = null;
    try {
      const receipt = await this.meter.settle(ending.status, ending.error?.code ?? null);
      this.trace?.end(receipt);
    } catch (error) {
      this.trace?.end(null);
      // The hold stays and is recovered (hold-keeper.ts); the answer is withheld, since nothing says what it cost.
      this.client.log.error({ err: error, requestId: this.client.requestId }, 'could not record the request');
      unrecorded = toGatewayError(error);
    }
    try {
      // Awaited only when a stream waits on its client: a JSON answer is sent in this turn.
      const delivering = this.deliver(ending, unrecorded);
      if (delivering) await delivering;
    } catch (error) {
      this.client.log.error({ err: error, requestId: this.client.requestId }, 'could not send the end of the answer');
    }
  }

  /** What the client is still owed: the answer, the end of its stream, or the error envelope. */
  private deliver(ending: Ending, unrecorded: GatewayError | null): void | Promise<void> {
    if (unrecorded) return (ending.unrecorded ?? this.sendError)(unrecorded);
    if (ending.deliver) return ending.deliver();
    if (ending.error) this.sendError(ending.error);
    // A stream that broke outside its own handling (hijacked, no envelope possible).
    this.client.endAnswer();
  }

  private readonly sendError = (error: GatewayError): void => this.client.sendError(error);

  private asGatewayError(error: unknown): GatewayError {
    const gatewayError = toGatewayError(error);
    if (gatewayError.code === 'internal_error') this.client.log.error({ err: error, requestId: this.client.requestId }, 'unexpected error');
    return gatewayError;
  }
}

/** Opens the lifecycle of a model request whose key is known: its receipt id, its meter, the watch on its client. */
export function openLifecycle(deps: GatewayDeps, request: FastifyRequest, reply: FastifyReply, endpoint: string): RequestLifecycle {
  const receiptId = `rcpt_${request.requestId.slice('req_'.length)}`;
  reply.header('x-svc-receipt-id', receiptId);
  const meter = deps.meter.begin({ requestId: request.requestId, receiptId, key: request.apiKey!, endpoint, stream: false, startedAt: Date.now() });
  request.lifecycle = new RequestLifecycle(meter, httpClient(request, reply), deps.tracing?.begin(request.headers) ?? null);
  return request.lifecycle;
}
