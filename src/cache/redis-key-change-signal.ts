import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { KeyChangeSignal } from './key-change-signal.ts';

/** The counter every process reads. */
export const DEFAULT_KEYS_VERSION_KEY = 'svc:keys:version';

/**
 * INCR, except that a counter starting over (a Redis restart without persistence, an eviction)
 * starts at the server's clock in microseconds rather than at 1. Otherwise it would count
 * through values it had before, and a process that last saw one of them would keep a cache
 * that predates every change since. '0' (missing) is never a value after a bump.
 */
const BUMP_SCRIPT = `
local version = redis.call('INCR', KEYS[1])
if version == 1 then
  local time = redis.call('TIME')
  redis.call('SET', KEYS[1], time[1] .. string.format('%06d', tonumber(time[2])))
end
return 1
`;

/**
 * Key change signal shared by every process on one Redis: `current` is one GET, `bump` one
 * script call. The connection belongs to the caller.
 *
 * The reads asked for in one turn of the event loop share one GET, sent once the turn is over:
 * after every one of them was asked, so each sees every change committed before it asked (a
 * revocation still takes effect on the very next request). Under load that is one GET for the
 * requests of a whole turn instead of one each.
 */
export function createRedisKeyChangeSignal(redis: Redis, options: { key?: string } = {}): KeyChangeSignal {
  const key = options.key ?? DEFAULT_KEYS_VERSION_KEY;
  let next: Promise<string> | null = null;
  return {
    current() {
      next ??= nextTurn().then(async () => {
        next = null;
        return (await redis.get(key)) ?? '0';
      });
      return next;
    },
    async bump() {
      // Rare (a key was minted, changed or revoked): sending the script text each time is fine.
      await redis.eval(BUMP_SCRIPT, 1, key);
    },
  };
}
