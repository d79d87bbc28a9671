import type { ProviderFailure } from '../providers/provider-error.ts';
import { localCoolDownBoard, type CoolDown, type CoolDownBoard } from './cool-down-board.ts';

/**
 * A circuit breaker per model, fed by every routed call, so a provider that is down is not
 * hammered and a request does not wait on a candidate known to fail:
 *
 * - up: calls go through. `failuresToCool` consecutive failures of the model's own (timeout,
 *   5xx or connection, 429, an answer that cannot be read, a refused credential) cool it down
 *   for `coolDownMs`; a provider's retry-after cools it at once, for at least that long.
 * - cooling: routing skips it (the receipt lists it as skipped, with why and until when).
 * - probing: once the cool-down ends, exactly one request (in all processes, with Redis) calls it;
 *   the others keep skipping it. Success restores it; failure cools it again, twice as long each
 *   time up to `maxCoolDownMs`. A probe that ends any other way (the client left, the request was
 *   refused) frees the slot at once; one that never reports back (its process died) after `probeMs`.
 *
 * Cool-downs are announced on the board (Redis when configured) as they start, and every process
 * mirrors them; consecutive-failure counts stay per process.
 */

/** Failures that say the model cannot answer anyone now (a rejected request says nothing about the model). */
const MODEL_FAILURES: ReadonlySet<ProviderFailure> = new Set(['timeout', 'unavailable', 'rate_limited', 'invalid_response', 'auth']);

export interface ModelHealthOptions {
  now?: () => number;
  failuresToCool?: number;
  coolDownMs?: number;
  maxCoolDownMs?: number;
  probeMs?: number;
  board?: CoolDownBoard;
}

export type Admission = { call: true; probe: boolean } | { call: false; reason: string; until: number };

export interface ModelHealthState {
  model: string;
  state: 'up' | 'cooling' | 'probing';
  consecutiveFailures: number;
  /** Epoch ms the current cool-down ends (0 when up). */
  coolUntil: number;
}

interface Local {
  failures: number;
  /** Length of the last cool-down, doubled by a failed probe. */
  lastCoolMs: number;
  /** This process holds the probe until then. */
  probingUntil: number;
}

export class ModelHealth {
  private readonly local = new Map<string, Local>();
  private readonly now: () => number;
  private readonly failuresToCool: number;
  private readonly coolDownMs: number;
  private readonly maxCoolDownMs: number;
  private readonly probeMs: number;
  readonly board: CoolDownBoard;

  constructor(options: ModelHealthOptions = {}) {
    this.now = options.now ?? Date.now;
    this.failuresToCool = options.failuresToCool ?? 5;
    this.coolDownMs = options.coolDownMs ?? 30_000;
    this.maxCoolDownMs = options.maxCoolDownMs ?? 300_000;
    this.probeMs = options.probeMs ?? 60_000;
    this.board = options.board ?? localCoolDownBoard();
  }

  /** Whether a request may call `modelId` now, and whether that call is the probe. */
  async admit(modelId: string): Promise<Admission> {
    const cool = this.board.current(modelId);
    if (!cool) return { call: true, probe: false };
    const now = this.now();
    if (now < cool.until) return { call: false, reason: `cooling down (${cool.reason})`, until: cool.until };
    const local = this.entry(modelId);
    if (local.probingUntil > now) return { call: false, reason: 'cooled down; a probe request is testing it', until: local.probingUntil };
    // The cool-down ended: one probe, in every process together.
    if (!(await this.board.claimProbe(modelId, this.probeMs))) {
      // Refused because another process cooled it again meanwhile, or because its probe runs.
      const again = this.board.current(modelId);
      if (again && this.now() < again.until) return { call: false, reason: `cooling down (${again.reason})`, until: again.until };
      return { call: false, reason: 'cooled down; a probe request is testing it', until: now + this.probeMs };
    }
    local.probingUntil = now + this.probeMs;
    return { call: true, probe: true };
  }

  succeeded(modelId: string): void {
    const local = this.local.get(modelId);
    if (local) this.local.delete(modelId);
    if (this.board.current(modelId) || local?.probingUntil) this.board.restore(modelId);
  }

  failed(modelId: string, failure: ProviderFailure, retryAfterSeconds?: number): void {
    if (!MODEL_FAILURES.has(failure)) return this.probeEnded(modelId);
    const local = this.entry(modelId);
    local.failures++;
    const now = this.now();
    const probeFailed = local.probingUntil > 0;
    const asked = retryAfterSeconds === undefined ? 0 : retryAfterSeconds * 1000;
    if (!probeFailed && local.failures < this.failuresToCool && asked === 0) return;
    const coolMs = probeFailed ? Math.min(this.maxCoolDownMs, local.lastCoolMs * 2) : local.failures >= this.failuresToCool ? this.coolDownMs : 0;
    const forMs = Math.max(coolMs, asked);
    local.lastCoolMs = Math.max(local.lastCoolMs, coolMs, this.coolDownMs);
    local.probingUntil = 0;
    local.failures = 0;
    const reason = probeFailed
      ? `its probe failed: ${failure}`
      : asked > 0 && coolMs === 0
        ? `the provider asked to retry after ${retryAfterSeconds} s`
        : `${this.failuresToCool} consecutive failures, the last ${failure}`;
    this.board.coolDown(modelId, { until: now + forMs, reason });
    // After the new cool-down is on the board: no other process probes under the old one.
    if (probeFailed) this.board.releaseProbe(modelId);
  }

  /** A call ended saying nothing about the model (the client left, a bug): if it was the probe, the next request may probe. */
  probeEnded(modelId: string): void {
    const local = this.local.get(modelId);
    if (!local?.probingUntil) return;
    local.probingUntil = 0;
    this.board.releaseProbe(modelId);
  }

  /** Forgets every failure and cool-down (a test's provider was replaced by a healthy one). */
  reset(modelIds: Iterable<string>): void {
    for (const modelId of modelIds) this.board.restore(modelId);
    this.local.clear();
  }

  /** Cooling down or being probed: not to be offered as connected (fix agents). */
  isDown(modelId: string): boolean {
    const cool = this.board.current(modelId);
    return cool !== undefined && (this.now() < cool.until || this.entry(modelId).probingUntil > this.now());
  }

  /** Every model with a state other than a clean "up", for metrics. */
  states(modelIds: Iterable<string>): ModelHealthState[] {
    const now = this.now();
    return [...modelIds].map((model) => {
      const cool: CoolDown | undefined = this.board.current(model);
      const failures = this.local.get(model)?.failures ?? 0;
      if (!cool) return { model, state: 'up', consecutiveFailures: failures, coolUntil: 0 };
      return { model, state: now < cool.until ? 'cooling' : 'probing', consecutiveFailures: failures, coolUntil: cool.until };
    });
  }

  private entry(modelId: string): Local {
    let entry = this.local.get(modelId);
    if (!entry) {
      entry = { failures: 0, lastCoolMs: 0, probingUntil: 0 };
      this.local.set(modelId, entry);
    }
    return entry;
  }
}
