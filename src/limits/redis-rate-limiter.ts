import type { Redis } from 'ioredis';
import { GCRA_SCRIPT, GCRA_SCRIPT_SHA } from './redis-gcra-script.ts';
import { checkTakeArguments, type RateDecision, type RateLimiter } from './rate-limiter.ts';

/** Where subject states live unless told otherwise: `svc:rl:<subject>`. */
export const DEFAULT_RATE_LIMIT_PREFIX = 'svc:rl:';

/**
 * Rate limiter shared by every process on one Redis: the GCRA step of gcra.ts as one atomic
 * Lua script (one round trip per take), state in one hash per subject that expires once idle.
 * Without `nowMs` the script reads the Redis server's clock, so gateway hosts with skewed clocks
 * agree. The connection belongs to the caller: `close` stops this limiter, not the connection.
 */
export function createRedisRateLimiter(redis: Redis, options: { prefix?: string } = {}): RateLimiter {
  const prefix = options.prefix ?? DEFAULT_RATE_LIMIT_PREFIX;
  let closed = false;

  async function run(key: string, perMinute: number, nowMs: number | undefined): Promise<unknown[]> {
    if (closed) throw new Error('The rate limiter is closed.');
    checkTakeArguments(perMinute, nowMs ?? 0);
    const args = [key, String(perMinute), nowMs === undefined ? '' : String(nowMs)];
    try {
      return (await redis.evalsha(GCRA_SCRIPT_SHA, 1, ...args)) as unknown[];
    } catch (error) {
      // First use on this server (or after SCRIPT FLUSH / a restart): send the script itself once.
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return (await redis.eval(GCRA_SCRIPT, 1, ...args)) as unknown[];
    }
  }

  return {
    async take(subject, perMinute, nowMs) {
      return decisionOf(await run(prefix + subject, perMinute, nowMs));
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
