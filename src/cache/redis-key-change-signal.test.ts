import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { REDIS_TEST_URL, withTestRedis } from '../../test/helpers/redis-test-connection.ts';
import { createRedisKeyChangeSignal } from './redis-key-change-signal.ts';

await withTestRedis('redis key change signal', (redis, runPrefix) => {
  // A second connection stands for a second gateway process.
  const other = new Redis(REDIS_TEST_URL, { maxRetriesPerRequest: 0 });
  let counters = 0;
  const freshKey = () => `${runPrefix}keys:version:${(counters += 1)}`;

  after(() => other.disconnect());

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

    test('reads asked in one turn share one GET, and a read asked after a bump sees it', async () => {
      const key = freshKey();
      const here = createRedisKeyChangeSignal(redis, { key });
      // A second connection whose GETs are counted: the process whose requests read the version.
      const counted = new Redis(REDIS_TEST_URL, { maxRetriesPerRequest: 0 });
      let gets = 0;
      const get = counted.get.bind(counted);
      counted.get = ((name: string) => ((gets += 1), get(name))) as typeof counted.get;
      const there = createRedisKeyChangeSignal(counted, { key });
      try {
        const versions = await Promise.all(Array.from({ length: 50 }, () => there.current()));
        assert.equal(gets, 1, 'fifty reads of one turn, one GET');
        assert.equal(new Set(versions).size, 1);
        // A read asked after a bump committed sees it, even while an earlier read's GET, sent
        // before the bump, is still on its way: it is never given that read's answer.
        for (let i = 0; i < 20; i += 1) {
          const earlier = there.current();
          await new Promise((resolve) => setImmediate(resolve));
          await here.bump();
          const later = await there.current();
          assert.notEqual(later, await earlier, `round ${i}: the read asked after the bump returned the version before it`);
        }
      } finally {
        counted.disconnect();
      }
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
});
