import { Redis } from 'ioredis';
import type { GatewayConfig } from '../config/schema.ts';
import { openStore } from '../storage/open-store.ts';
import type { Store } from '../storage/store.ts';
import { createRedisKeyChangeSignal } from './redis-key-change-signal.ts';
import { keyChangeVersion, withKeyChangeSignal } from './signalled-store.ts';

/** What every gateway process (and the CLI) shares with the others: the store and, with REDIS_URL, Redis. */
export interface SharedState {
  store: Store;
  redis: Redis | null;
  /** The version the key cache follows; absent: the store's own change token. */
  keyVersion?: () => Promise<string>;
  close(): Promise<void>;
}

/**
 * Open the store (DATABASE_URL or SQLite) and, when REDIS_URL is set, Redis: key changes are
 * then announced on a Redis counter that every process reads per request.
 */
export async function openSharedState(config: GatewayConfig, env: NodeJS.ProcessEnv = process.env): Promise<SharedState> {
  const store = await openStore(config, env);
  if (!env.REDIS_URL) return { store, redis: null, close: () => store.close() };
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
