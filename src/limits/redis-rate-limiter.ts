import type { Redis } from 'ioredis';
import { GCRA_SCRIPT, GCRA_SCRIPT_SHA } from './redis-gcra-script.ts';
import { checkTakeArguments, type RateDecision, type RateLimiter } from './rate-limiter.ts';

/** Where subject states live unless told otherwise: `svc:rl:<subject>`. */
export const DEFAULT_RATE_LIMIT_PREFIX = 'svc:rl:';

/** A decision plus a counter read atomically with it (the keys version, see src/cache/). */
export interface VersionedRateDecision {
  decision: RateDecision;
  /** The counter's value when the take ran; '0' when the counter does not exist. */
  keysVersion: string;
}

export interface RedisRateLimiter extends RateLimiter {
  /**
   * `take`, and in the same round trip read the counter at `versionKey` (GET, '0' when missing).
   * The read happens after the call starts, so every INCR that finished before it is seen.
   */
  takeWithVersion(subject: string, perMinute: number, versionKey: string, nowMs?: number): Promise<VersionedRateDecision>;
}

/**
 * Rate limiter shared by every process on one Redis: the GCRA step of gcra.ts as one atomic
 * Lua script (one round trip per take), state in one hash per subject that expires once idle.
 * Without `nowMs` the script reads the Redis server's clock, so gateway hosts with skewed clocks
 * agree. The connection belongs to the caller: `close` stops this limiter, not the connection.
 */
export function createRedisRateLimiter(redis: Redis, options: { prefix?: string } = {}): RedisRateLimiter {
  const prefix = options.prefix ?? DEFAULT_RATE_LIMIT_PREFIX;
  let closed = false;

  async function run(keys: string[], perMinute: number, nowMs: number | undefined): Promise<unknown[]> {
    if (closed) throw new Error('The rate limiter is closed.');
    checkTakeArguments(perMinute, nowMs ?? 0);
    const args = [...keys, String(perMinute), nowMs === undefined ? '' : String(nowMs)];
    try {
      return (await redis.evalsha(GCRA_SCRIPT_SHA, keys.length, ...args)) as unknown[];
    } catch (error) {
      // First use on this server (or after SCRIPT FLUSH / a restart): send the script itself once.
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return (await redis.eval(GCRA_SCRIPT, keys.length, ...args)) as unknown[];
    }
  }

  return {
    async take(subject, perMinute, nowMs) {
      return decisionOf(await run([prefix + subject], perMinute, nowMs));
    },

    async takeWithVersion(subject, perMinute, versionKey, nowMs) {
      const reply = await run([prefix + subject, versionKey], perMinute, nowMs);
      return { decision: decisionOf(reply), keysVersion: String(reply[2]) };
    },

    async close() {
      closed = true;
    },
  };
}

function decisionOf(reply: unknown[]): RateDecision {
  if (reply[0] === 1) return { allowed: true };
  return { allowed: false, retryAfterSeconds: Number(reply[1]) };
}
