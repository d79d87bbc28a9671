import type { Redis } from 'ioredis';
import type { CoolDown, CoolDownBoard } from './cool-down-board.ts';

export const COOL_DOWNS_KEY = 'svc:health:cooldowns';
const probeKey = (modelId: string) => `svc:health:probe:${modelId}`;

/**
 * Cool-downs in one Redis hash (model -> {until, reason}); each process reads it every
 * `pollMs` (one HGETALL), so a cool-down reaches the others within that. The connection
 * belongs to the caller; failures of Redis leave the local mirror as it was.
 */
export function redisCoolDownBoard(redis: Redis, options: { pollMs?: number; onError?: (error: unknown) => void } = {}): CoolDownBoard {
  let mirror = new Map<string, CoolDown>();
  // Writes of this process since a poll was sent win over what that poll read.
  let writes = 0;
  const written = new Map<string, { at: number; cool: CoolDown | null }>();
  const write = (modelId: string, cool: CoolDown | null) => {
    written.set(modelId, { at: ++writes, cool });
    if (cool) mirror.set(modelId, cool);
    else mirror.delete(modelId);
  };
  const onError = options.onError ?? (() => {});
  async function poll(): Promise<void> {
    const sentAt = writes;
    const fields = await redis.hgetall(COOL_DOWNS_KEY);
    const next = new Map<string, CoolDown>();
    for (const [modelId, text] of Object.entries(fields)) {
      try {
        next.set(modelId, JSON.parse(text) as CoolDown);
      } catch {
        // A foreign value: not a cool-down.
      }
    }
    for (const [modelId, { at, cool }] of written) {
      if (at <= sentAt) written.delete(modelId);
      else if (cool) next.set(modelId, cool);
      else next.delete(modelId);
    }
    mirror = next;
  }
  const timer = setInterval(() => poll().catch(onError), options.pollMs ?? 1_000);
  timer.unref();
  poll().catch(onError);
  return {
    current: (modelId) => mirror.get(modelId),
    coolDown(modelId, cool) {
      write(modelId, cool);
      redis.hset(COOL_DOWNS_KEY, modelId, JSON.stringify(cool)).catch(onError);
    },
    restore(modelId) {
      write(modelId, null);
      redis.multi().hdel(COOL_DOWNS_KEY, modelId).del(probeKey(modelId)).exec().catch(onError);
    },
    async claimProbe(modelId, ms) {
      try {
        return (await redis.set(probeKey(modelId), String(process.pid), 'PX', ms, 'NX')) === 'OK';
      } catch (error) {
        // Without Redis every process may probe: better than never trying the model again.
        onError(error);
        return true;
      }
    },
    close: () => clearInterval(timer),
  };
}
