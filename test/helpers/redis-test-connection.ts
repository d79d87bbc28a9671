import { randomUUID } from 'node:crypto';
import { after, test } from 'node:test';
import { Redis } from 'ioredis';

/**
 * Test helpers for suites that need a real Redis: `REDIS_TEST_URL`, else the local default.
 * Without a reachable Redis those suites skip with a message, except under CI=true where a
 * missing Redis is a failure (CI starts one).
 */
export const REDIS_TEST_URL = process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379';

/** A connected client, or why there is none. Fails fast: no reconnect loop, no offline queue. */
export async function connectTestRedis(): Promise<Redis | { unreachable: string }> {
  const redis = new Redis(REDIS_TEST_URL, {
    lazyConnect: true,
    connectTimeout: 2000,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  let lastError: unknown;
  redis.on('error', (error) => (lastError = error));
  try {
    await redis.connect();
    await redis.ping();
    return redis;
  } catch (error) {
    // Disconnecting a connection that already ended arms a 2 s timer nothing clears (ioredis 5).
    if (redis.status !== 'end') redis.disconnect();
    // The 'error' event carries the socket's reason (ECONNREFUSED...); the rejection only says "closed".
    const reason = lastError ?? error;
    const cause = reason instanceof Error ? reason.message : String(reason);
    return { unreachable: `Redis is not reachable at ${REDIS_TEST_URL} (${cause})` };
  }
}

/** Register the suite as skipped (with the reason), or as failed under CI=true. */
export function reportRedisUnreachable(suite: string, reason: string): void {
  if (process.env.CI === 'true') {
    test(suite, () => {
      throw new Error(`${reason}; CI=true requires Redis (start redis-server or set REDIS_TEST_URL).`);
    });
    return;
  }
  test(suite, { skip: `${reason}; start redis-server or set REDIS_TEST_URL to run it` }, () => {});
}

/** A key prefix no other test run shares, e.g. `svc:test:4242:1f0c...:`. */
export function uniqueTestPrefix(): string {
  return `svc:test:${process.pid}:${randomUUID()}:`;
}

/** Delete every key under `prefix` (SCAN, so a big test database is not blocked). */
export async function deleteKeysUnder(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length > 0) await redis.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
}

/**
 * A suite that needs a real Redis: `define` registers its tests with a connected client and a key
 * prefix no other run shares; after them the keys under the prefix are deleted and the client
 * disconnected. Without a reachable Redis the suite is reported unreachable instead (see above).
 */
export async function withTestRedis(suite: string, define: (redis: Redis, prefix: string) => void): Promise<void> {
  const connection = await connectTestRedis();
  if (!(connection instanceof Redis)) {
    reportRedisUnreachable(suite, connection.unreachable);
    return;
  }
  const prefix = uniqueTestPrefix();
  after(async () => {
    await deleteKeysUnder(connection, prefix);
    connection.disconnect();
  });
  define(connection, prefix);
}
