/**
 * Rate limiter port: requests per minute per subject (an API key id). The in-memory adapter
 * serves one process; a Redis adapter (one atomic Lua script) will serve many. Both run the
 * same GCRA step (gcra.ts) and pass the one contract suite in rate-limiter-contract.ts.
 */

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface RateLimiter {
  /**
   * Count one request for `subject` (a key id) against `perMinute`; refused requests are not counted.
   * A refusal's `retryAfterSeconds` is honest: the same request after exactly that long is allowed
   * (if nothing else was counted meanwhile). `nowMs` defaults to the adapter's clock.
   * Throws RangeError when `perMinute` is not an integer in 1..MAX_PER_MINUTE or `nowMs` is not an integer.
   */
  take(subject: string, perMinute: number, nowMs?: number): Promise<RateDecision>;
  close(): Promise<void>;
}

/** The largest accepted limit; keeps every product in the GCRA step exact in a double (and in Lua). */
export const MAX_PER_MINUTE = 1_000_000;

/** Rejects limits and instants the GCRA step cannot handle exactly; shared by every adapter. */
export function checkTakeArguments(perMinute: number, nowMs: number): void {
  if (!Number.isInteger(perMinute) || perMinute < 1 || perMinute > MAX_PER_MINUTE) {
    throw new RangeError(`perMinute must be an integer from 1 to ${MAX_PER_MINUTE}, got ${perMinute}`);
  }
  if (!Number.isSafeInteger(nowMs)) {
    throw new RangeError(`nowMs must be an integer number of milliseconds, got ${nowMs}`);
  }
}
