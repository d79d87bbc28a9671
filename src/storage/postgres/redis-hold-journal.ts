import type { Redis } from 'ioredis';
import type { HoldJournal } from '../store.ts';

/** Where journals live unless told otherwise: `svc:holds:<scope>:<owner>` (a hash) and `svc:holds:<scope>` (the owners, a set). */
export const DEFAULT_HOLD_JOURNAL_PREFIX = 'svc:holds:';

// Drops an owner only when its hash is empty, so an entry written meanwhile keeps it listed.
const DROP_OWNER_SCRIPT = `
if redis.call('HLEN', KEYS[1]) == 0 then redis.call('SREM', KEYS[2], ARGV[1]) end
return 1
`;

/**
 * The hold journal on Redis: one hash of entries per process, one set of the processes. A put is
 * one round trip (the HSET and the SADD go out together, in that order, on the one connection).
 * The connection belongs to the caller. What the journal survives, and what it does not, is
 * written in postgres-hold-journal.ts.
 */
export function createRedisHoldJournal(redis: Redis, options: { prefix?: string } = {}): HoldJournal {
  const prefix = options.prefix ?? DEFAULT_HOLD_JOURNAL_PREFIX;
  const ownersKey = (scope: string) => `${prefix}${scope}`;
  const entriesKey = (scope: string, owner: string) => `${prefix}${scope}:${owner}`;
  return {
    available: () => redis.status === 'ready',
    async put(scope, owner, entries) {
      if (entries.size === 0) return;
      const fields: string[] = [];
      for (const [id, text] of entries) fields.push(id, text);
      // The entry before the owner's listing: a dropOwner running between the two finds it and keeps the owner.
      await Promise.all([redis.hset(entriesKey(scope, owner), ...fields), redis.sadd(ownersKey(scope), owner)]);
    },
    async remove(scope, owner, ids) {
      if (ids.length > 0) await redis.hdel(entriesKey(scope, owner), ...ids);
    },
    async entries(scope, owner) {
      return new Map(Object.entries(await redis.hgetall(entriesKey(scope, owner))));
    },
    owners: (scope) => redis.smembers(ownersKey(scope)),
    async dropOwner(scope, owner) {
      await redis.eval(DROP_OWNER_SCRIPT, 2, entriesKey(scope, owner), ownersKey(scope), owner);
    },
  };
}
