/**
 * GCRA (generic cell rate algorithm) in exact integer arithmetic, shared by every rate limiter
 * adapter; a Redis Lua script can mirror `stepGcra` line for line (all integers stay below 2^53).
 *
 * Each subject has a theoretical arrival time (TAT). A request at `now` moves it to
 * `max(TAT, now) + 60000 / perMinute` ms and is allowed when the new TAT is at most one
 * minute ahead of `now`. So after an idle minute `perMinute` requests pass at once, and then
 * one more every `60000 / perMinute` ms.
 *
 * The emission interval is rarely a whole number of ms (60000 / 7), and rounding it would let
 * an exact steady rate drift into refusals (or a burst grow past `perMinute`). So the TAT is
 * kept exactly as `tatMs + remainder / perMinute` ms: adding the interval adds 60000 to the
 * remainder and carries whole ms. Every number stays small enough to be exact in a double.
 */

/** How far ahead of now the TAT may be: the burst is this window's worth of requests. */
export const WINDOW_MS = 60_000;

/** A subject's theoretical arrival time: `tatMs + remainder / perMinute` ms, 0 <= remainder < perMinute. */
export interface GcraState {
  tatMs: number;
  remainder: number;
  perMinute: number;
}

export type GcraStep = { allowed: true; state: GcraState } | { allowed: false; retryAfterSeconds: number };

/**
 * One request at `nowMs` (integer) against `perMinute` (integer >= 1), given the subject's state
 * (undefined when unknown or dropped). A refusal leaves the state as it was.
 */
export function stepGcra(state: GcraState | undefined, perMinute: number, nowMs: number): GcraStep {
  const tat = state === undefined ? undefined : rescale(state, perMinute);
  // A TAT in the past means an idle subject: start from now. (tatMs < now <=> TAT < now, as remainder / perMinute < 1.)
  const start = tat !== undefined && tat.tatMs >= nowMs ? tat : { tatMs: nowMs, remainder: 0, perMinute };
  const units = start.remainder + WINDOW_MS;
  const next: GcraState = {
    tatMs: start.tatMs + Math.floor(units / perMinute),
    remainder: units % perMinute,
    perMinute,
  };
  const waitMs = ceilTatMs(next) - WINDOW_MS - nowMs;
  if (waitMs <= 0) return { allowed: true, state: next };
  return { allowed: false, retryAfterSeconds: Math.ceil(waitMs / 1000) };
}

/** True when the TAT is not after `nowMs`: the state then decides exactly like no state, so it may be dropped. */
export function isIdle(state: GcraState, nowMs: number): boolean {
  return ceilTatMs(state) <= nowMs;
}

function ceilTatMs(state: GcraState): number {
  return state.tatMs + (state.remainder > 0 ? 1 : 0);
}

/**
 * Express the TAT in 1/perMinute ms, rounding up. The TAT itself (how far the subject is
 * ahead of now) is kept, so the share of the minute's budget in use carries over: a key that
 * used half its budget at 60/min has used half of it at 6/min or 600/min.
 */
function rescale(state: GcraState, perMinute: number): GcraState {
  if (state.perMinute === perMinute) return state;
  const remainder = ceilDivide(state.remainder * perMinute, state.perMinute);
  if (remainder === perMinute) return { tatMs: state.tatMs + 1, remainder: 0, perMinute };
  return { tatMs: state.tatMs, remainder, perMinute };
}

/** ceil(a / b) for non-negative integers whose product-sized operands stay below 2^53. */
function ceilDivide(a: number, b: number): number {
  const quotient = Math.floor(a / b);
  return quotient * b < a ? quotient + 1 : quotient;
}
