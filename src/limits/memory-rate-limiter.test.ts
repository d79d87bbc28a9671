import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createMemoryRateLimiter } from './memory-rate-limiter.ts';
import { runRateLimiterContract } from '../testing/rate-limiter-contract.ts';

runRateLimiterContract('memory', async () => createMemoryRateLimiter());

describe('memory rate limiter', () => {
  test('idle subjects are swept once enough takes have passed', async () => {
    const limiter = createMemoryRateLimiter();
    const start = 1_700_000_000_000;
    for (let i = 0; i < 3000; i += 1) await limiter.take(`key_${i}`, 1, start);
    assert.equal(limiter.size, 3000);
    // One request a minute, so every one of them is idle a minute later.
    const later = start + 60_000;
    for (let i = 0; i < 3000; i += 1) await limiter.take('key_busy', 600, later);
    assert.equal(limiter.size, 1);
  });

  test('a sweep keeps subjects that are still limited', async () => {
    const limiter = createMemoryRateLimiter();
    const start = 1_700_000_000_000;
    await limiter.take('key_limited', 1, start);
    for (let i = 0; i < 3000; i += 1) await limiter.take(`key_${i}`, 600, start);
    for (let i = 0; i < 3000; i += 1) await limiter.take('key_busy', 6000, start + 30_000);
    assert.equal(limiter.size, 2);
    assert.deepEqual(await limiter.take('key_limited', 1, start + 59_999), { allowed: false, retryAfterSeconds: 1 });
    assert.deepEqual(await limiter.take('key_limited', 1, start + 60_000), { allowed: true });
  });

  test('memory stays bounded by the subjects active in the last minute', async () => {
    const limiter = createMemoryRateLimiter();
    let now = 1_700_000_000_000;
    let largest = 0;
    // A new subject every 50 ms at 1/min: about 1200 are active at any moment.
    for (let i = 0; i < 50_000; i += 1) {
      now += 50;
      await limiter.take(`key_${i}`, 1, now);
      largest = Math.max(largest, limiter.size);
    }
    assert.ok(largest <= 2 * 1200 + 1024 + 2, `the map grew to ${largest}`);
  });

  test('uses the wall clock when no instant is given', async () => {
    const limiter = createMemoryRateLimiter();
    assert.deepEqual(await limiter.take('key_wall', 1), { allowed: true });
    const refusal = await limiter.take('key_wall', 1);
    assert.equal(refusal.allowed, false);
    // Issued at the wall clock's now, so it holds for a take stamped a little later.
    assert.deepEqual(await limiter.take('key_wall', 1, Date.now() + 60_000), { allowed: true });
  });

  test('close empties it and refuses later takes', async () => {
    const limiter = createMemoryRateLimiter();
    await limiter.take('key_closed', 5, 0);
    await limiter.close();
    assert.equal(limiter.size, 0);
    await assert.rejects(limiter.take('key_closed', 5, 0), /closed/);
  });
});
