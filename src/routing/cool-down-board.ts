/** A model routing skips until `until` (epoch ms), and why. */
export interface CoolDown {
  until: number;
  reason: string;
}

/**
 * Where cool-downs live: this process's memory, or Redis so every process skips a model that
 * any of them saw fail. `current` is read on every routed call, so it answers from a local
 * mirror; only claiming a probe (once per ended cool-down) waits on Redis.
 */
export interface CoolDownBoard {
  current(modelId: string): CoolDown | undefined;
  /** Takes effect here at once, and in other processes within a poll. */
  coolDown(modelId: string, cool: CoolDown): void;
  restore(modelId: string): void;
  /** True for exactly one caller (across processes) per `ms`: the probe of a model whose cool-down ended. */
  claimProbe(modelId: string, ms: number): Promise<boolean>;
  close(): void;
}

export function localCoolDownBoard(now: () => number = Date.now): CoolDownBoard {
  const cools = new Map<string, CoolDown>();
  const probes = new Map<string, number>();
  return {
    current: (modelId) => cools.get(modelId),
    coolDown: (modelId, cool) => void cools.set(modelId, cool),
    restore(modelId) {
      cools.delete(modelId);
      probes.delete(modelId);
    },
    async claimProbe(modelId, ms) {
      if ((probes.get(modelId) ?? 0) > now()) return false;
      probes.set(modelId, now() + ms);
      return true;
    },
    close() {},
  };
}
