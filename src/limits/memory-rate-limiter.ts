import { isIdle, stepGcra, type GcraState } from './gcra.ts';
import { checkTakeArguments, type RateLimiter } from './rate-limiter.ts';

/** The in-memory limiter also tells how many subjects it holds (for tests and metrics). */
export interface MemoryRateLimiter extends RateLimiter {
  readonly size: number;
}

/** Sweep at least this many takes apart, so small maps are not rescanned on every call. */
const MINIMUM_TAKES_BETWEEN_SWEEPS = 1024;

/**
 * Rate limiter for one process: one GCRA state per subject in a Map. Idle subjects are swept
 * lazily, after as many takes as the map held after the last sweep (at least 1024): amortised
 * O(1) per take, and the map stays under twice the subjects active in the last minute plus 1024.
 * No timers: nothing keeps the process alive.
 */
export function createMemoryRateLimiter(): MemoryRateLimiter {
  const states = new Map<string, GcraState>();
  let takesUntilSweep = MINIMUM_TAKES_BETWEEN_SWEEPS;
  let closed = false;

  function sweep(nowMs: number): void {
    for (const [subject, state] of states) {
      if (isIdle(state, nowMs)) states.delete(subject);
    }
    // Fixed until the next sweep, so the map at most doubles (plus the minimum) in between.
    takesUntilSweep = Math.max(MINIMUM_TAKES_BETWEEN_SWEEPS, states.size);
  }

  return {
    get size() {
      return states.size;
    },

    async take(subject, perMinute, nowMs = Date.now()) {
      if (closed) throw new Error('The rate limiter is closed.');
      checkTakeArguments(perMinute, nowMs);
      takesUntilSweep -= 1;
      if (takesUntilSweep <= 0) sweep(nowMs);

      const step = stepGcra(states.get(subject), perMinute, nowMs);
      if (!step.allowed) return { allowed: false, retryAfterSeconds: step.retryAfterSeconds };
      states.set(subject, step.state);
      return { allowed: true };
    },

    async close() {
      closed = true;
      states.clear();
    },
  };
}
