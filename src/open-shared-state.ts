import { Redis } from 'ioredis';
import type { GatewayConfig } from './config/schema.ts';
import { openStore } from './storage/open-store.ts';
import type { Store } from './storage/store.ts';
import { createLocalKeyChangeSignal } from './cache/key-change-signal.ts';
import { createRedisKeyChangeSignal } from './cache/redis-key-change-signal.ts';
import { keyChangeVersion, withKeyChangeSignal } from './cache/signalled-store.ts';

/** What every gateway process (and the CLI) shares with the others: the store and, with REDIS_URL, Redis. */
export interface SharedState {
  store: Store;
  redis: Redis | null;
  /** The version the key cache follows: it moves whenever keys change, in any process. */
  keyVersion: () => Promise<string>;
  close(): Promise<void>;
}

/**
 * Open the store (DATABASE_URL or SQLite) and, when REDIS_URL is set, Redis. Every key change
 * made through the returned store is announced (on a Redis counter every process reads, or
 * locally), so key caches never need dropping by hand.
 */
export async function openSharedState(config: GatewayConfig, env: NodeJS.ProcessEnv = process.env): Promise<SharedState> {
  const store = await openStore(config, env);
  if (!env.REDIS_URL) {
    // The store's token sees other processes' changes; the local signal sees this process's own.
    const signal = createLocalKeyChangeSignal(store);
    return { store: withKeyChangeSignal(store, signal), redis: null, keyVersion: () => signal.current(), close: () => store.close() };
  }
  const redis = new Redis(env.REDIS_URL, { maxRetriesPerRequest: 2, enableAutoPipelining: true });
  const signal = createRedisKeyChangeSignal(redis);
  return {
    store: withKeyChangeSignal(store, signal),
    redis,
    keyVersion: keyChangeVersion(signal, store),
    async close() {
      await store.close();
      if (redis.status !== 'end') await redis.quit().catch(() => redis.disconnect());
    },
  };
}
