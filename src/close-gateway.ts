import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { HoldKeeper } from './billing/hold-keeper.ts';
import type { RequestMeter } from './billing/request-meter.ts';
import type { FixRunner } from './fix/fix-runner.ts';
import type { RateLimiter } from './limits/rate-limiter.ts';
import { settledWithin, withDeadline } from './lib/deadline.ts';
import type { Closer } from './open-shared-state.ts';
import type { ProviderRegistry } from './providers/provider-registry.ts';
import type { Store } from './storage/store.ts';

/** What a running gateway opened, in the order it is closed. */
export interface GatewayParts {
  app: FastifyInstance;
  connections: ConnectionTracker;
  logger: FastifyBaseLogger;
  meter: RequestMeter;
  fix: FixRunner;
  holdKeeper: HoldKeeper;
  store: Store;
  rateLimiter: RateLimiter;
  /** The provider connections of the config running now. */
  providers: Pick<ProviderRegistry, 'close'>;
  /** The store and Redis (open-shared-state.ts). */
  closers: Closer[];
}

export interface CloseTimes {
  /** How long requests, streams and fix runs in flight may go on finishing. */
  drainMs: number;
  /** The deadline of each later step: settling what was cut, releasing holds, closing each client. */
  stepMs: number;
}

/** How often, while draining, connections that went idle are closed (their last request finished). */
const IDLE_SWEEP_MS = 100;

export interface ConnectionTracker {
  /** Closes every client connection that has no request in progress. */
  closeIdle(): void;
  /** Closes every client connection, the upgraded ones (Responses sockets) too. */
  closeAll(): void;
}

/** Upgraded connections with a request in progress (a Responses socket's turn): not idle. */
export const connectionsAtWork = new WeakSet<Socket>();

/**
 * Follows the server's client connections. Node's own closeIdleConnections() skips a connection
 * on which no request ever arrived (one a client opened ahead, or left after aborting before it
 * wrote its request): it would keep the server from closing until the headers timeout.
 */
export function trackConnections(server: Server): ConnectionTracker {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return {
    closeIdle() {
      // A socket carries its response in progress as _httpMessage (Node's own idle test reads it too).
      for (const socket of sockets) {
        if (!(socket as Socket & { _httpMessage?: unknown })._httpMessage && !connectionsAtWork.has(socket)) socket.destroy();
      }
    },
    closeAll() {
      for (const socket of sockets) socket.destroy();
    },
  };
}

/** Resolves once no metered request is open. The meter keeps one waiter, so only this loop asks it. */
async function allSettled(meter: RequestMeter): Promise<void> {
  while (meter.inFlight > 0) await meter.drain();
}

/**
 * Graceful shutdown: stop accepting, let what is in flight finish for `drainMs`, then cut it
 * (requests settle as cancelled and runs as failed, each charged for what it used), release the
 * holds of whatever could still not settle (their receipts close as recovery closes them), and close every
 * client. Each step after the drain has its own deadline; the steps go on when one passes, and
 * the returned promise then rejects naming them, so the process can exit non-zero.
 */
export async function closeGateway(parts: GatewayParts, times: CloseTimes): Promise<void> {
  const { app, logger, meter, fix, holdKeeper } = parts;
  const failures: string[] = [];
  const step = async (name: string, work: () => Promise<unknown>, force?: () => void) => {
    const started = Date.now();
    try {
      await withDeadline(work(), times.stepMs, name);
      logger.debug({ step: name, ms: Date.now() - started }, 'shutdown step done');
    } catch (error) {
      force?.();
      failures.push(`${name}: ${(error as Error).message}`);
      logger.error({ err: error, step: name }, 'shutdown step failed');
    }
  };

  // Stop accepting: the listener closes now; connections without a request in progress close now
  // and the others as their last request ends (closeConnectionsWhenClosing; the sweep for streams).
  const serverClosed = app.close();
  const idleSweep = setInterval(() => parts.connections.closeIdle(), IDLE_SWEEP_MS);
  idleSweep.unref();
  let cut = () => {};
  const cutting = new Promise<void>((resolve) => (cut = resolve));
  const runsEnded = fix.close(cutting);
  const drained = Promise.all([serverClosed, runsEnded, allSettled(meter)]);
  if (!(await settledWithin(drained, times.drainMs))) {
    logger.warn({ requests: meter.inFlight, runs: fix.inFlight }, 'drain time over: cutting the requests and runs still in flight');
    // A client connection closed is a client gone: its request stops its provider call and settles as cancelled.
    app.server.closeAllConnections();
    // Node's closeAllConnections leaves the upgraded ones.
    parts.connections.closeAll();
    cut();
    await step('settling what was cut', () => drained);
  }
  clearInterval(idleSweep);
  holdKeeper.stop();

  // Requests or runs that could not settle (a database that stopped answering): release their holds
  // so the balance is not kept held until the hold expires; their receipts close as recovery closes them.
  if (meter.inFlight > 0 || fix.inFlight > 0) {
    logger.warn({ requests: meter.inFlight, runs: fix.inFlight }, 'releasing the holds of requests that could not settle');
    await step('releasing holds', () => parts.store.releaseOrphanedHolds(new Date().toISOString(), (owner) => owner === holdKeeper.owner));
  }

  await step('closing the rate limiter', () => parts.rateLimiter.close());
  await step('closing provider connections', () => parts.providers.close());
  for (const closer of parts.closers) await step(`closing ${closer.name}`, () => closer.close(), closer.force);
  if (failures.length > 0) throw new Error(`shutdown did not finish cleanly: ${failures.join('; ')}`);
}
