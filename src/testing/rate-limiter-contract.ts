import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_PER_MINUTE, type RateDecision, type RateLimiter } from '../limits/rate-limiter.ts';

const ALLOWED: RateDecision = { allowed: true };
const RATES = [1, 7, 60, 600];
const MINUTE = 60_000;

/** Deterministic PRNG (mulberry32) so a failing property run can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomInteger(random: () => number, low: number, high: number): number {
  return low + Math.floor(random() * (high - low + 1));
}

function ceilDivide(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}

/**
 * The specification written the obvious way: the TAT in BigInt units of 1/perMinute ms since
 * the epoch; a rate change keeps the TAT, rounded up to the new unit.
 */
export class ReferenceRateLimiter {
  private readonly tats = new Map<string, { units: bigint; perMinute: bigint }>();

  take(subject: string, perMinute: number, nowMs: number): RateDecision {
    const rate = BigInt(perMinute);
    const now = BigInt(nowMs) * rate;
    const previous = this.tats.get(subject);
    const tat = previous === undefined ? now : ceilDivide(previous.units * rate, previous.perMinute);
    const next = (tat > now ? tat : now) + BigInt(MINUTE);
    const wait = next - BigInt(MINUTE) * rate - now;
    if (wait <= 0n) {
      this.tats.set(subject, { units: next, perMinute: rate });
      return ALLOWED;
    }
    return { allowed: false, retryAfterSeconds: Number(ceilDivide(wait, 1000n * rate)) };
  }

  /** The whole millisecond the subject's TAT falls in (undefined when unknown): the instant where "idle" is decided. */
  tatFloorMs(subject: string): number | undefined {
    const tat = this.tats.get(subject);
    return tat === undefined ? undefined : Number(tat.units / tat.perMinute);
  }
}

/** The suite every RateLimiter adapter must pass; `makeLimiter` gives a fresh, empty limiter. */
export function runRateLimiterContract(name: string, makeLimiter: () => Promise<RateLimiter>): void {
  async function withLimiter(body: (limiter: RateLimiter) => Promise<void>): Promise<void> {
    const limiter = await makeLimiter();
    try {
      await body(limiter);
    } finally {
      await limiter.close();
    }
  }

  async function takeMany(limiter: RateLimiter, subject: string, perMinute: number, nowMs: number, count: number) {
    const decisions: RateDecision[] = [];
    for (let i = 0; i < count; i += 1) decisions.push(await limiter.take(subject, perMinute, nowMs));
    return decisions;
  }

  /** Refused at `nowMs`; waiting one second less than retry-after is still refused, waiting exactly that long is allowed. */
  async function assertHonestRefusal(limiter: RateLimiter, subject: string, perMinute: number, nowMs: number, context: string) {
    const refusal = await limiter.take(subject, perMinute, nowMs);
    assert.equal(refusal.allowed, false, `expected a refusal ${context}`);
    if (refusal.allowed) return 0;
    const seconds = refusal.retryAfterSeconds;
    assert.ok(Number.isInteger(seconds) && seconds >= 1, `retry-after ${seconds} is not a whole positive number ${context}`);
    const early = await limiter.take(subject, perMinute, nowMs + (seconds - 1) * 1000);
    assert.equal(early.allowed, false, `retry-after ${seconds}s is longer than needed ${context}`);
    const onTime = await limiter.take(subject, perMinute, nowMs + seconds * 1000);
    assert.deepEqual(onTime, ALLOWED, `waiting the retry-after ${seconds}s was not enough ${context}`);
    return seconds;
  }

  describe(`RateLimiter contract: ${name}`, () => {
    for (const perMinute of RATES) {
      test(`a burst of ${perMinute} is allowed after an idle minute, the next one is refused`, () =>
        withLimiter(async (limiter) => {
          const start = 1_700_000_000_123;
          const burst = await takeMany(limiter, 'key_burst', perMinute, start, perMinute);
          assert.deepEqual(burst, Array(perMinute).fill(ALLOWED));
          const seconds = await assertHonestRefusal(limiter, 'key_burst', perMinute, start, `at ${perMinute}/min`);
          // The next slot opens one emission interval after the burst.
          assert.equal(seconds, Math.ceil(MINUTE / perMinute / 1000));
        }));
    }

    test('retry-after is honest and tight at random instants (seeded property)', () =>
      withLimiter(async (limiter) => {
        const random = seededRandom(20_250_101);
        for (const perMinute of [...RATES, 2, 13, 59, 61, 999, randomInteger(random, 1, 5000)]) {
          const subject = `key_honest_${perMinute}`;
          const interval = MINUTE / perMinute;
          let now = randomInteger(random, 0, 2_000_000_000_000);
          for (let step = 0; step < 400; step += 1) {
            const roll = random();
            if (roll < 0.4) now += 0;
            else if (roll < 0.9) now += randomInteger(random, 0, Math.ceil(interval * 2));
            else now += randomInteger(random, 0, 2 * MINUTE);
            const decision = await limiter.take(subject, perMinute, now);
            if (decision.allowed) continue;
            const context = `at ${perMinute}/min, step ${step}, now ${now}`;
            now += (await assertHonestRefusal(limiter, subject, perMinute, now, context)) * 1000;
          }
        }
      }));

    test('decisions match the reference model, rate changes included (seeded property)', () =>
      withLimiter(async (limiter) => {
        const random = seededRandom(42);
        const reference = new ReferenceRateLimiter();
        const subjects = ['key_a', 'key_b', 'key_c'];
        const rates = [1, 3, 7, 60, 61, 600, 7919];
        let now = randomInteger(random, 0, 2_000_000_000_000);
        for (let step = 0; step < 5000; step += 1) {
          now += random() < 0.5 ? 0 : randomInteger(random, 0, random() < 0.9 ? 2000 : 70_000);
          const subject = subjects[randomInteger(random, 0, subjects.length - 1)]!;
          const perMinute = random() < 0.9 ? 7 : rates[randomInteger(random, 0, rates.length - 1)]!;
          const expected = reference.take(subject, perMinute, now);
          assert.deepEqual(await limiter.take(subject, perMinute, now), expected, `step ${step}: ${subject} at ${perMinute}/min, now ${now}`);
        }
      }));

    test('decisions match the reference model at instants on the TAT itself (seeded property)', () =>
      withLimiter(async (limiter) => {
        // In the millisecond the TAT falls in, a take continues from the TAT's fraction rather than
        // restarting from now; only a burst to the limit at that instant shows the difference.
        const random = seededRandom(7);
        const reference = new ReferenceRateLimiter();
        let now = 1_700_000_000_000;
        for (let step = 0; step < 300; step += 1) {
          const perMinute = [1, 7, 13, 61][randomInteger(random, 0, 3)]!;
          const tatMs = reference.tatFloorMs('key_edge');
          if (tatMs !== undefined && random() < 0.7) now = Math.max(now, tatMs + randomInteger(random, -1, 1));
          else now += randomInteger(random, 0, 3000);
          const takes = randomInteger(random, 1, perMinute + 1);
          for (let take = 0; take < takes; take += 1) {
            const expected = reference.take('key_edge', perMinute, now);
            assert.deepEqual(await limiter.take('key_edge', perMinute, now), expected, `step ${step}.${take}: at ${perMinute}/min, now ${now}`);
          }
        }
      }));

    test('refused requests are not counted', () =>
      withLimiter(async (limiter) => {
        const start = 1_700_000_000_000;
        await takeMany(limiter, 'key_spam', 3, start, 3);
        const first = await limiter.take('key_spam', 3, start);
        assert.deepEqual(first, { allowed: false, retryAfterSeconds: 20 });
        for (let ms = 0; ms < 20_000; ms += 97) {
          assert.equal((await limiter.take('key_spam', 3, start + ms)).allowed, false);
        }
        assert.deepEqual(await limiter.take('key_spam', 3, start + 20_000), ALLOWED);
        assert.deepEqual(await limiter.take('key_spam', 3, start + 20_000), { allowed: false, retryAfterSeconds: 20 });
      }));

    for (const perMinute of [...RATES, 13, 1000]) {
      test(`a steady ${perMinute} per minute is always allowed`, () =>
        withLimiter(async (limiter) => {
          const start = 1_712_345_678_901;
          const minutes = perMinute <= 13 ? 1000 : 20;
          // Evenly spaced, on whole milliseconds rounded down and rounded up.
          for (const round of [Math.floor, Math.ceil]) {
            const subject = `key_steady_${round.name}`;
            for (let i = 0; i < perMinute * minutes; i += 1) {
              const at = start + round((i * MINUTE) / perMinute);
              assert.deepEqual(await limiter.take(subject, perMinute, at), ALLOWED, `request ${i} at +${at - start}ms`);
            }
          }
          // The whole minute's allowance at the top of every minute.
          for (let minute = 0; minute < Math.min(minutes, 30); minute += 1) {
            const burst = await takeMany(limiter, 'key_steady_bursts', perMinute, start + minute * MINUTE, perMinute);
            assert.deepEqual(burst, Array(perMinute).fill(ALLOWED), `minute ${minute}`);
          }
        }));
    }

    test('subjects are independent', () =>
      withLimiter(async (limiter) => {
        const now = 1_700_000_000_000;
        await takeMany(limiter, 'key_one', 5, now, 5);
        assert.equal((await limiter.take('key_one', 5, now)).allowed, false);
        assert.deepEqual(await takeMany(limiter, 'key_two', 5, now, 5), Array(5).fill(ALLOWED));
        assert.equal((await limiter.take('key_two', 5, now)).allowed, false);
      }));

    test('concurrent takes at one instant allow exactly perMinute', () =>
      withLimiter(async (limiter) => {
        const now = 1_700_000_000_000;
        const decisions = await Promise.all(Array.from({ length: 50 }, () => limiter.take('key_race', 20, now)));
        assert.equal(decisions.filter((decision) => decision.allowed).length, 20);
      }));

    test('a changed limit keeps the share of the minute already used', () =>
      withLimiter(async (limiter) => {
        const now = 1_700_000_000_000;
        // Half of 60/min used: half of 600/min (300 more) is left, and half of 6/min (3 more).
        await takeMany(limiter, 'key_up', 60, now, 30);
        assert.deepEqual(await takeMany(limiter, 'key_up', 600, now, 300), Array(300).fill(ALLOWED));
        assert.equal((await limiter.take('key_up', 600, now)).allowed, false);
        await takeMany(limiter, 'key_down', 60, now, 30);
        assert.deepEqual(await takeMany(limiter, 'key_down', 6, now, 3), Array(3).fill(ALLOWED));
        // All of 60/min used, then lowered to 6/min: the next slot is one 6/min interval away.
        await takeMany(limiter, 'key_lowered', 60, now, 60);
        assert.deepEqual(await limiter.take('key_lowered', 6, now), { allowed: false, retryAfterSeconds: 10 });
        await assertHonestRefusal(limiter, 'key_lowered', 6, now + 1234, 'after lowering the limit');
      }));

    test('arguments outside the contract are a RangeError', () =>
      withLimiter(async (limiter) => {
        for (const perMinute of [0, -1, 1.5, Number.NaN, Infinity, MAX_PER_MINUTE + 1]) {
          await assert.rejects(limiter.take('key_bad', perMinute, 0), RangeError, `perMinute ${perMinute}`);
        }
        for (const nowMs of [1.5, Number.NaN, Infinity]) {
          await assert.rejects(limiter.take('key_bad', 10, nowMs), RangeError, `nowMs ${nowMs}`);
        }
        assert.deepEqual(await limiter.take('key_bad', MAX_PER_MINUTE, 0), ALLOWED);
      }));
  });
}
