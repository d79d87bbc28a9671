import type { ProviderFailure } from '../providers/provider-error.ts';

/** Consecutive failures after which a model counts as down. */
const FAILURES_TO_DOWN = 3;
/** A down model counts as up again this long after its last failure (its next call is the probe). */
const DOWN_FOR_MS = 30_000;

/** Failures that say the model cannot answer anyone now (a rejected request says nothing about the model). */
const DOWN_FAILURES: ReadonlySet<ProviderFailure> = new Set(['timeout', 'unavailable', 'invalid_response', 'auth']);

/**
 * What this process has seen of each model lately: a model whose last few calls all failed
 * for reasons of its own is "known to be down" for a while. Fed by every routed call.
 */
export class ModelHealth {
  private readonly failures = new Map<string, { count: number; lastAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  succeeded(modelId: string): void {
    if (this.failures.size > 0) this.failures.delete(modelId);
  }

  failed(modelId: string, failure: ProviderFailure): void {
    if (!DOWN_FAILURES.has(failure)) return;
    const entry = this.failures.get(modelId);
    this.failures.set(modelId, { count: (entry?.count ?? 0) + 1, lastAt: this.now() });
  }

  isDown(modelId: string): boolean {
    const entry = this.failures.get(modelId);
    return entry !== undefined && entry.count >= FAILURES_TO_DOWN && this.now() - entry.lastAt < DOWN_FOR_MS;
  }
}
