import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { createRedisRateLimiter } from './redis-rate-limiter.ts';
import { runRateLimiterContract } from '../testing/rate-limiter-contract.ts';
import { REDIS_TEST_URL, withTestRedis } from '../../test/helpers/redis-test-connection.ts';

await withTestRedis('redis rate limiter', (redis, runPrefix) => {
  let limiters = 0;
  /** A fresh, empty limiter: its own prefix under this run's. */
  const freshPrefix = () => `${runPrefix}${(limiters += 1)}:`;

  async function serverMs(): Promise<number> {
    const [seconds, micros] = await redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  runRateLimiterContract('redis', async () => createRedisRateLimiter(redis, { prefix: freshPrefix() }));

  describe('redis rate limiter', () => {
    test('two connections (two processes) taking at once allow exactly perMinute in total', async () => {
      const other = new Redis(REDIS_TEST_URL, { maxRetriesPerRequest: 0 });
      try {
        const prefix = freshPrefix();
        const here = createRedisRateLimiter(redis, { prefix });
        const there = createRedisRateLimiter(other, { prefix });
        // On the server's clock: at 20/min the next slot is 3 s away, far beyond this test's run.
        const decisions = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? here : there).take('key_shared', 20)));
        assert.equal(decisions.filter((decision) => decision.allowed).length, 20);
        // At a fixed instant the count is exact at any rate.
        const atOnce = await Promise.all(
          Array.from({ length: 400 }, (_, i) => (i % 2 === 0 ? here : there).take('key_instant', 137, 1_700_000_000_000)),
        );
        assert.equal(atOnce.filter((decision) => decision.allowed).length, 137);
      } finally {
        other.disconnect();
      }
    });

    test('without an instant it uses the Redis server clock', async () => {
      const prefix = freshPrefix();
      const limiter = createRedisRateLimiter(redis, { prefix });
      const serverNow = await serverMs();
      assert.deepEqual(await limiter.take('key_clock', 1), { allowed: true });
      const tatMs = Number(await redis.hget(`${prefix}key_clock`, 'tatMs'));
      assert.ok(tatMs - 60_000 >= serverNow && tatMs - 60_000 <= (await serverMs()), "the TAT starts at the server's ms");
      assert.equal((await limiter.take('key_clock', 1)).allowed, false);
      // Stamped one window after the server's now (plus the test's own run time): free again.
      assert.deepEqual(await limiter.take('key_clock', 1, serverNow + 60_000 + 5_000), { allowed: true });
      assert.equal((await limiter.take('key_clock', 1, serverNow - 1_000)).allowed, false);
    });

    test('state is one hash per subject that expires one window after it goes idle', async () => {
      const prefix = freshPrefix();
      const limiter = createRedisRateLimiter(redis, { prefix });
      const now = 1_700_000_000_000;
      await limiter.take('key_state', 7, now);
      await limiter.take('key_state', 7, now);
      // Two intervals of 60000/7 ms: 17142 ms and 6/7 ms past now.
      assert.deepEqual(await redis.hgetall(`${prefix}key_state`), {
        tatMs: String(now + 17_142),
        remainder: '6',
        perMinute: '7',
      });
      const ttl = await redis.pttl(`${prefix}key_state`);
      assert.ok(ttl > 17_143 + 60_000 - 1_000 && ttl <= 17_143 + 60_000, `ttl ${ttl}`);
      // A refusal writes nothing, not even a new expiry.
      await limiter.take('key_refused', 1, now);
      await redis.pexpire(`${prefix}key_refused`, 5_000);
      assert.equal((await limiter.take('key_refused', 1, now)).allowed, false);
      assert.ok((await redis.pttl(`${prefix}key_refused`)) <= 5_000);
    });

    test('large instants and limits are written exactly (no exponent notation)', async () => {
      const prefix = freshPrefix();
      const limiter = createRedisRateLimiter(redis, { prefix });
      const now = 4_000_000_000_000_000; // above 10^14, where Lua's tostring would round
      assert.deepEqual(await limiter.take('key_big', 999_999, now), { allowed: true });
      assert.deepEqual(await redis.hgetall(`${prefix}key_big`), {
        tatMs: String(now),
        remainder: '60000',
        perMinute: '999999',
      });
    });

    test('reloads the script after the server forgot it', async () => {
      const limiter = createRedisRateLimiter(redis, { prefix: freshPrefix() });
      await redis.script('FLUSH');
      assert.deepEqual(await limiter.take('key_flushed', 5, 0), { allowed: true });
      assert.deepEqual(await limiter.take('key_flushed', 5, 0), { allowed: true });
      // Takes of one turn go out together: after a flush each still counts once, in order.
      await redis.script('FLUSH');
      const decisions = await Promise.all(Array.from({ length: 8 }, () => limiter.take('key_flushed_together', 5, 0)));
      assert.deepEqual(
        decisions.map((decision) => decision.allowed),
        [true, true, true, true, true, false, false, false],
      );
    });

    test('a Redis that cannot be reached fails every take of a turn, the first and the gathered alike, rather than leaving one waiting', async () => {
      // Nothing listens on port 1; no reconnecting, so the commands fail as soon as the connection does.
      const unreachable = new Redis({ host: '127.0.0.1', port: 1, maxRetriesPerRequest: 0, retryStrategy: () => null });
      unreachable.on('error', () => undefined);
      try {
        const limiter = createRedisRateLimiter(unreachable, { prefix: freshPrefix() });
        const outcomes = await Promise.race([
          Promise.allSettled(Array.from({ length: 5 }, () => limiter.take('key_unreachable', 5, 0))),
          new Promise<'waiting'>((resolve) => setTimeout(() => resolve('waiting'), 5_000).unref()),
        ]);
        assert.notEqual(outcomes, 'waiting', 'a take still waits 5 s after Redis was found unreachable');
        assert.deepEqual(
          (outcomes as PromiseSettledResult<unknown>[]).map((outcome) => outcome.status),
          ['rejected', 'rejected', 'rejected', 'rejected', 'rejected'],
        );
      } finally {
        unreachable.disconnect();
      }
    });

    test('close stops the limiter but leaves the shared connection open', async () => {
      const limiter = createRedisRateLimiter(redis, { prefix: freshPrefix() });
      await limiter.close();
      await assert.rejects(limiter.take('key_closed', 5, 0), /closed/);
      assert.equal(await redis.ping(), 'PONG');
    });
  });
});
