import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { CoolDown, CoolDownBoard } from './cool-down-board.ts';

export const COOL_DOWNS_KEY = 'svc:health:cooldowns';
/** Where every change of the hash is announced, as it is made: `{origin, model, cool}` (cool null: restored), after the connection's key prefix. */
export const COOL_DOWNS_CHANNEL = 'svc:health:cooldowns:changed';
const probeKey = (modelId: string) => `svc:health:probe:${modelId}`;

interface Announcement {
  origin: string;
  model: string;
  cool: CoolDown | null;
}

// The probe of a model whose cool-down has not ended in the hash (another process cooled it again
// meanwhile) is refused, handing back that cool-down; otherwise one claimer per claim.
const CLAIM_SCRIPT = `
local cool = redis.call('HGET', KEYS[1], ARGV[1])
if cool then
  local ok, decoded = pcall(cjson.decode, cool)
  if ok and type(decoded) == 'table' and tonumber(decoded['until']) and tonumber(decoded['until']) > tonumber(ARGV[2]) then return cool end
end
if redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4], 'NX') then return 1 end
return 0
`;

// Only the claim's owner releases it: a claim that expired and was taken by another process stays.
const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`;

function parseCool(text: string): CoolDown | null {
  try {
    const cool = JSON.parse(text) as CoolDown;
    return typeof cool?.until === 'number' && typeof cool.reason === 'string' ? cool : null;
  } catch {
    // A foreign value: not a cool-down.
    return null;
  }
}

/**
 * Cool-downs in one Redis hash (model -> {until, reason}). Every change is published on
 * COOL_DOWNS_CHANNEL in the same transaction as it is written, and every process subscribes
 * (a connection of its own, `redis.duplicate()`): a cool-down reaches the others as it starts.
 * The hash is read whole when the subscription is (re)made, so a process that was cut off from
 * Redis catches up on what it missed. The main connection belongs to the caller; failures of
 * Redis leave the local mirror as it was.
 */
export function redisCoolDownBoard(redis: Redis, options: { onError?: (error: unknown) => void; now?: () => number } = {}): CoolDownBoard {
  const origin = randomUUID();
  // Channels are not keys: the connection's key prefix (if any) is put before the channel by hand.
  const channel = `${redis.options.keyPrefix ?? ''}${COOL_DOWNS_CHANNEL}`;
  const now = options.now ?? Date.now;
  const onError = options.onError ?? (() => {});
  let mirror = new Map<string, CoolDown>();
  // Changes seen since a read of the whole hash was sent win over what that read found.
  let changes = 0;
  const changed = new Map<string, { at: number; cool: CoolDown | null }>();
  const apply = (modelId: string, cool: CoolDown | null) => {
    changed.set(modelId, { at: ++changes, cool });
    if (cool) mirror.set(modelId, cool);
    else mirror.delete(modelId);
  };
  async function readAll(): Promise<void> {
    const sentAt = changes;
    const fields = await redis.hgetall(COOL_DOWNS_KEY);
    const next = new Map<string, CoolDown>();
    for (const [modelId, text] of Object.entries(fields)) {
      const cool = parseCool(text);
      if (cool) next.set(modelId, cool);
    }
    for (const [modelId, { at, cool }] of changed) {
      if (at <= sentAt) changed.delete(modelId);
      else if (cool) next.set(modelId, cool);
      else next.delete(modelId);
    }
    mirror = next;
  }
  const publish = (modelId: string, cool: CoolDown | null) => {
    const announcement: Announcement = { origin, model: modelId, cool };
    const multi = redis.multi();
    if (cool) multi.hset(COOL_DOWNS_KEY, modelId, JSON.stringify(cool));
    else multi.hdel(COOL_DOWNS_KEY, modelId).del(probeKey(modelId));
    multi.publish(channel, JSON.stringify(announcement)).exec().catch(onError);
  };

  // Its own connection, made now even when the caller's waits for a first command.
  const subscriber = redis.duplicate({ lazyConnect: false });
  subscriber.on('error', onError);
  // Each (re)subscription reads the hash: what was announced while this process was not listening.
  subscriber.on('ready', () => void subscriber.subscribe(channel).then(readAll).catch(onError));
  // At once too, on the caller's connection: cool-downs already on the board count from the first request.
  readAll().catch(onError);
  subscriber.on('message', (_channel: string, text: string) => {
    let announcement: Announcement;
    try {
      announcement = JSON.parse(text) as Announcement;
    } catch {
      return;
    }
    if (announcement.origin === origin || typeof announcement.model !== 'string') return;
    apply(announcement.model, announcement.cool === null ? null : parseCool(JSON.stringify(announcement.cool)));
  });

  return {
    current: (modelId) => mirror.get(modelId),
    coolDown(modelId, cool) {
      apply(modelId, cool);
      publish(modelId, cool);
    },
    restore(modelId) {
      apply(modelId, null);
      publish(modelId, null);
    },
    async claimProbe(modelId, ms) {
      try {
        const answer = (await redis.eval(CLAIM_SCRIPT, 2, COOL_DOWNS_KEY, probeKey(modelId), modelId, String(now()), origin, String(ms))) as
          number | string;
        if (typeof answer === 'string') {
          const cool = parseCool(answer);
          if (cool) apply(modelId, cool);
          return false;
        }
        return answer === 1;
      } catch (error) {
        // Without Redis every process may probe: better than never trying the model again.
        onError(error);
        return true;
      }
    },
    releaseProbe(modelId) {
      redis.eval(RELEASE_SCRIPT, 1, probeKey(modelId), origin).catch(onError);
    },
    close: () => subscriber.disconnect(),
  };
}
