import type { Redis } from 'ioredis';
import type { GatewayConfig } from './config/schema.ts';
import { describeStore, openStore, storeBackend } from './storage/open-store.ts';
import { redactedUrl } from './storage/redacted-url.ts';
import type { Store } from './storage/store.ts';
import { createLocalKeyChangeSignal } from './cache/key-change-signal.ts';
import { createRedisKeyChangeSignal } from './cache/redis-key-change-signal.ts';
import { createRedisHoldJournal } from './storage/postgres/redis-hold-journal.ts';
import { keyChangeVersion, withKeyChangeSignal } from './cache/signalled-store.ts';
import type { ReadinessProbe } from './http/readiness.ts';
import { withDeadline } from './lib/deadline.ts';

/** One connection the process opened, closed politely; `force` cuts it when that takes too long. */
export interface Closer {
  name: string;
  close(): Promise<void>;
  force?(): void;
}

/** What every gateway process (and the CLI) shares with the others: the store and, with REDIS_URL, Redis. */
export interface SharedState {
  store: Store;
  redis: Redis | null;
  /** The version the key cache follows: it moves whenever keys change, in any process. */
  keyVersion: () => Promise<string>;
  /** The database (one read of a table the migrations create) and, with REDIS_URL, Redis (PING). */
  probes: ReadinessProbe[];
  /** Closing steps in order: the store, then Redis. */
  closers: Closer[];
  /** Every closer in order, each within `deadlineMs`; rejects naming those that did not finish. */
  close(deadlineMs?: number): Promise<void>;
}

/**
 * Open the store (DATABASE_URL or SQLite) and, when REDIS_URL is set, Redis. Every key change
 * made through the returned store is announced (on a Redis counter every process reads, or
 * locally), so key caches never need dropping by hand.
 */
/** A dependency the process could not reach when it started: the message names it and why. */
export class DependencyUnreachable extends Error {
  constructor(
    readonly dependency: 'PostgreSQL' | 'Redis',
    where: string,
    cause: unknown,
  ) {
    super(`cannot reach ${dependency} at ${where}: ${(cause as Error)?.message || String(cause)}`);
    this.name = 'DependencyUnreachable';
  }
}

/** How long opening waits for Redis to answer before it gives up (PostgreSQL: the pool's connection timeout). */
export const REDIS_CONNECT_MS = 5_000;

export interface SharedStateOptions {
  /** Every error of the Redis connections after they opened (a reconnect loop reports each attempt). */
  onRedisError?: (error: unknown) => void;
  /** Redis answers again after an error. */
  onRedisReady?: () => void;
}

export async function openSharedState(
  config: GatewayConfig,
  env: NodeJS.ProcessEnv = process.env,
  options: SharedStateOptions = {},
): Promise<SharedState> {
  const backend = storeBackend(config, env);
  let store: Store;
  try {
    store = await openStore(config, env);
  } catch (error) {
    // A schema or migration problem is not an unreachable database: its own message says what.
    if (backend.kind !== 'postgres' || !isConnectionError(error)) throw error;
    throw new DependencyUnreachable('PostgreSQL', describeStore(backend), error);
  }
  const storeCloser: Closer = { name: 'database', close: () => store.close() };
  // Reads the key-change row: answers only when the database does and the schema is there.
  const databaseProbe: ReadinessProbe = { name: 'database', check: async () => void (await store.keysChangeToken()) };
  if (!env.REDIS_URL) {
    // The store's token sees other processes' changes; the local signal sees this process's own.
    const signal = createLocalKeyChangeSignal(store);
    const closers = [storeCloser];
    return {
      store: withKeyChangeSignal(store, signal),
      redis: null,
      keyVersion: () => signal.current(),
      probes: [databaseProbe],
      closers,
      close: (deadlineMs) => closeAll(closers, deadlineMs),
    };
  }
  // Loaded only with REDIS_URL: an embedded gateway does not carry the client (~15 MiB).
  const { Redis } = await import('ioredis');
  // Each command is written when it is made, not gathered until the next turn of the event loop
  // (auto-pipelining): commands of one request still share a round trip on the one connection, and
  // the request waits one turn less. Measured 2026-11-27 (ledger bench, alternated builds): PostgreSQL
  // mode at concurrency 1 +1.30 and +1.49 ms over a direct call against +1.61 and +1.59 gathered;
  // 50 connections 0.75-0.76x of the SQLite mode's throughput against 0.70-0.74x.
  const redis = new Redis(env.REDIS_URL, { maxRetriesPerRequest: 2 });
  try {
    await redisReady(redis, REDIS_CONNECT_MS);
  } catch (error) {
    redis.disconnect();
    await store.close();
    throw new DependencyUnreachable('Redis', redactedUrl(env.REDIS_URL), error);
  }
  // From here on, errors are the caller's to log (never ioredis's own "Unhandled error event").
  let failing = false;
  redis.on('error', (error) => {
    failing = true;
    options.onRedisError?.(error);
  });
  redis.on('ready', () => {
    if (failing) options.onRedisReady?.();
    failing = false;
  });
  const signal = createRedisKeyChangeSignal(redis);
  // Holds placed in a balance lease are recorded in Redis, not PostgreSQL, before the provider call
  // (LEDGER_HOLD_JOURNAL=off: in PostgreSQL; docs/operations.md, "Scale out").
  if (env.LEDGER_HOLD_JOURNAL !== 'off') store.useHoldJournal?.(createRedisHoldJournal(redis));
  const redisCloser: Closer = {
    name: 'redis',
    async close() {
      if (redis.status === 'end') return;
      const ended = new Promise((resolve) => redis.once('end', resolve));
      // QUIT lets the replies still due arrive; a connection that is not up has none to wait for.
      if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
      else redis.disconnect();
      await ended;
    },
    force: () => {
      if (redis.status !== 'end') redis.disconnect();
    },
  };
  const redisProbe: ReadinessProbe = {
    name: 'redis',
    async check() {
      // While reconnecting, commands would wait in the offline queue: say so at once.
      if (redis.status !== 'ready') throw new Error(`redis connection is ${redis.status}`);
      await redis.ping();
    },
  };
  const closers = [storeCloser, redisCloser];
  return {
    store: withKeyChangeSignal(store, signal),
    redis,
    keyVersion: keyChangeVersion(signal, store),
    probes: [databaseProbe, redisProbe],
    closers,
    close: (deadlineMs) => closeAll(closers, deadlineMs),
  };
}

/** Runs every closer, each within the deadline (forced when it passes); rejects once all ran if one failed. */
export async function closeAll(closers: Closer[], deadlineMs = 5_000): Promise<void> {
  const failed: string[] = [];
  for (const closer of closers) {
    try {
      await withDeadline(closer.close(), deadlineMs, `closing ${closer.name}`);
    } catch (error) {
      closer.force?.();
      failed.push((error as Error).message);
    }
  }
  if (failed.length > 0) throw new Error(failed.join('; '));
}

/** Resolves once `redis` answers, rejects with its last error once `ms` have passed (or at once on a bad password or URL). */
function redisReady(redis: Redis, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let lastError: Error | undefined;
    const timer = setTimeout(() => finish(lastError ?? new Error(`no answer within ${ms} ms`)), ms);
    const onError = (error: Error) => {
      lastError = error;
      // Retrying does not mend a refused password or an unknown database.
      if (/WRONGPASS|NOAUTH|invalid password|ERR DB index/i.test(error.message)) finish(error);
    };
    const onReady = () => finish();
    function finish(error?: Error) {
      clearTimeout(timer);
      redis.off('error', onError);
      redis.off('ready', onReady);
      if (error) reject(error);
      else resolve();
    }
    redis.on('error', onError);
    redis.once('ready', onReady);
  });
}

/** An error of reaching the database (refused, timed out, no such host), not of what it answered. */
function isConnectionError(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code && /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|EPIPE|ENOENT|57P03|28P01|3D000)$/.test(code))
    return true;
  const message = (error as Error)?.message ?? '';
  return /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED|password authentication failed|does not exist|the database system is (starting up|shutting down)/i.test(
    message,
  );
}
