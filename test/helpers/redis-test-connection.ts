import { randomUUID } from 'node:crypto';
import { after, test } from 'node:test';
import { Redis } from 'ioredis';
import { servicesSkipped } from './test-services.ts';

/**
 * Test helpers for suites that need a real Redis: `REDIS_TEST_URL` (server and logical database),
 * else the local default. Without a reachable Redis those suites skip with a message, except under
 * CI=true where a missing Redis is a failure (CI starts one), and in the unit run
 * (TEST_SERVICES=none), where they always skip.
 */
const REDIS_SERVER_URL = process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379';

/**
 * Every key this test file writes, and every key the gateways it starts write, lies under this
 * prefix, so test files running in parallel on one server and logical database never see each
 * other's keys (a gateway's own keys are fixed names: svc:health:cooldowns, svc:keys:version...).
 * It is one process's: node --test and scripts/run-tests.mjs run each file in its own process. The
 * runner names it after its run and the file (TEST_NAMESPACE), so that it can sweep what a killed
 * file left; otherwise it is the pid and a random id. Nothing ever flushes a database.
 */
export const REDIS_TEST_PREFIX = `${process.env.TEST_NAMESPACE ?? `gwtest:${process.pid}-${randomUUID().slice(0, 8)}`}:`;

/**
 * The URL every client of the tests uses, the gateways' REDIS_URL too: ioredis reads `keyPrefix`
 * from the URL's query and puts it before every key of every command (a script's KEYS too). A
 * keyPrefix the given URL sets already is kept.
 */
export const REDIS_TEST_URL = withKeyPrefix(REDIS_SERVER_URL, REDIS_TEST_PREFIX);

function withKeyPrefix(url: string, prefix: string): string {
  const parsed = new URL(url);
  if (parsed.searchParams.has('keyPrefix')) return url;
  parsed.searchParams.set('keyPrefix', prefix);
  return parsed.href;
}

/** A connected client, or why there is none. Fails fast: no reconnect loop, no offline queue. */
export async function connectTestRedis(): Promise<Redis | { unreachable: string }> {
  if (servicesSkipped()) return { unreachable: 'Redis is not used by the unit run (TEST_SERVICES=none)' };
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
    return { unreachable: `Redis is not reachable at ${REDIS_SERVER_URL} (${cause})` };
  }
}

/** Register the suite as skipped (with the reason), or as failed under CI=true. */
export function reportRedisUnreachable(suite: string, reason: string): void {
  if (servicesSkipped()) {
    test(suite, { skip: reason }, () => {});
    return;
  }
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

/**
 * Delete every key under `prefix` (SCAN, so a big test database is not blocked). SCAN's pattern
 * and answers are whole key names, which the client's keyPrefix is not put before; UNLINK's are.
 */
export async function deleteKeysUnder(redis: Redis, prefix: string): Promise<void> {
  const clientPrefix = redis.options.keyPrefix ?? '';
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${globEscaped(clientPrefix + prefix)}*`, 'COUNT', 1000);
    if (keys.length > 0) await redis.unlink(...keys.map((key) => key.slice(clientPrefix.length)));
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

function globEscaped(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
