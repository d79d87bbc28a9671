import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { createRedisRateLimiter } from '../limits/redis-rate-limiter.ts';
import {
  connectTestRedis,
  deleteKeysUnder,
  REDIS_TEST_URL,
  reportRedisUnreachable,
  uniqueTestPrefix,
} from '../../test/helpers/redis-test-connection.ts';
import { createRedisKeyChangeSignal } from './redis-key-change-signal.ts';

const connection = await connectTestRedis();

if (!(connection instanceof Redis)) {
  reportRedisUnreachable('redis key change signal', connection.unreachable);
} else {
  const redis = connection;
  const runPrefix = uniqueTestPrefix();
  // A second connection stands for a second gateway process.
  const other = new Redis(REDIS_TEST_URL, { maxRetriesPerRequest: 0 });
  let counters = 0;
  const freshKey = () => `${runPrefix}keys:version:${(counters += 1)}`;

  after(async () => {
    await deleteKeysUnder(redis, runPrefix);
    other.disconnect();
    redis.disconnect();
  });

  describe('redis key change signal', () => {
    test('a bump from one process is seen by the next read in another', async () => {
      const key = freshKey();
      const here = createRedisKeyChangeSignal(redis, { key });
      const there = createRedisKeyChangeSignal(other, { key });
      assert.equal(await there.current(), '0', 'no bump yet');
      const seen = new Set(['0']);
      for (let i = 0; i < 5; i += 1) {
        await here.bump();
        const version = await there.current();
        assert.ok(!seen.has(version), `bump ${i} gave a version seen before: ${version}`);
        seen.add(version);
        assert.equal(await here.current(), version);
      }
    });

    test('the rate limiter reads the same version in its one call', async () => {
      const key = freshKey();
      const signal = createRedisKeyChangeSignal(redis, { key });
      const limiter = createRedisRateLimiter(other, { prefix: `${runPrefix}rl:` });
      const before = await limiter.takeWithVersion('key_a', 100, signal.key, 0);
      assert.equal(before.keysVersion, await signal.current());
      await signal.bump();
      const afterBump = await limiter.takeWithVersion('key_a', 100, signal.key, 0);
      assert.notEqual(afterBump.keysVersion, before.keysVersion);
      assert.equal(afterBump.keysVersion, await signal.current());
      assert.deepEqual(afterBump.decision, { allowed: true });
    });

    test('concurrent bumps from two processes are all counted', async () => {
      const key = freshKey();
      const here = createRedisKeyChangeSignal(redis, { key });
      const there = createRedisKeyChangeSignal(other, { key });
      await here.bump();
      const start = BigInt(await here.current());
      await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? here : there).bump()));
      assert.equal(BigInt(await there.current()), start + 50n);
    });

    test('a counter that starts over never repeats an earlier version', async () => {
      const key = freshKey();
      const signal = createRedisKeyChangeSignal(redis, { key });
      await signal.bump();
      await signal.bump();
      const earlier = BigInt(await signal.current());
      await redis.del(key); // a Redis restart without persistence, or an eviction
      assert.equal(await signal.current(), '0');
      await signal.bump();
      const restarted = BigInt(await signal.current());
      assert.ok(restarted > earlier, `${restarted} should be past ${earlier}`);
      // It starts at the server clock in microseconds.
      const seconds = BigInt((await redis.time())[0] ?? 0);
      assert.ok(restarted / 1_000_000n <= seconds && restarted / 1_000_000n >= seconds - 5n, `${restarted} is not the server's clock in µs`);
    });
  });
}
