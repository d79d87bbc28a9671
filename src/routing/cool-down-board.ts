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
  /** Takes effect here at once, and in other processes as soon as they receive its announcement. */
  coolDown(modelId: string, cool: CoolDown): void;
  /** The model is up again: its cool-down and any probe claim go. */
  restore(modelId: string): void;
  /**
   * True for exactly one caller (across processes) per `ms`, or until the claim is released: the
   * probe of a model whose cool-down ended. False while another probe runs or when the model is
   * cooling again (the new cool-down is then `current`).
   */
  claimProbe(modelId: string, ms: number): Promise<boolean>;
  /** The probe ended without restoring the model (it failed, or was cut): the next request may probe. */
  releaseProbe(modelId: string): void;
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
      if ((cools.get(modelId)?.until ?? 0) > now()) return false;
      probes.set(modelId, now() + ms);
      return true;
    },
    releaseProbe: (modelId) => void probes.delete(modelId),
    close() {},
  };
}
