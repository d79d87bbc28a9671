import { setImmediate as nextImmediate } from 'node:timers/promises';

/**
 * One budget of work a turn of the event loop, shared by everything that runs in slices: reading a
 * large body as it arrives, putting its long strings back, weighing and counting a huge prompt,
 * writing it upstream. Each slice loop does a step, then asks `sliceSpent()`, and awaits
 * `nextSlice()` when it is. With a budget of its own per loop, those steps chained within one
 * turn (a body's last read, then its strings, then the prompt's first weighing) and held the
 * event loop for 10-15 ms (`bench:huge`, longest turn on the CPU), which a request sent meanwhile
 * waited for in full. Shared, the longest turn's p90 went from 11.4 to 7.8 ms (three alternated
 * runs each).
 *
 * The loops that yield in one turn resume in the next, after a marker queued ahead of them that
 * starts that turn's budget: the first of them may spend all of it, the others then take one step
 * each. A loop that starts outside a slice (in a request's own handling) shares the budget of the
 * turn it starts in, or yields after one step when none is open. That costs a request little: a
 * loop started while sockets are read (most are) resumes in the same turn of the event loop, where
 * immediates run after them, with the budget opened there.
 */
// At 2 ms against 3, three alternated runs of `bench:huge` each: the longest turn's median 4.3
// against 5.0 ms, its p90 7.6 against 7.8 (the rest: a socket's reads, a collection, a first
// prompt's cold code), decisions the same (median 23 against 24 ms).
export const SLICE_MS = 2;

let deadline = 0;
let opening = false;

function open(): void {
  opening = false;
  deadline = performance.now() + SLICE_MS;
}

/** Whether this turn's budget is spent: the loop then awaits `nextSlice()`. */
export function sliceSpent(): boolean {
  return performance.now() > deadline;
}

/** Resolves in the next turn of the event loop, within the budget the loops resuming then share. */
export function nextSlice(): Promise<void> {
  if (!opening) {
    opening = true;
    setImmediate(open);
  }
  return nextImmediate();
}
