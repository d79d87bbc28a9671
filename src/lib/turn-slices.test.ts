import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as nextImmediate } from 'node:timers/promises';
import { nextSlice, SLICE_MS, sliceSpent } from './turn-slices.ts';

/** One step of work: the clock moves by a fraction of the budget. */
function step(): void {
  const until = performance.now() + SLICE_MS / 6;
  while (performance.now() < until);
}

/** Runs `steps` steps as a slice loop, logging each. */
async function sliced(name: string, steps: number, log: string[]): Promise<void> {
  for (let done = 0; done < steps; done++) {
    step();
    log.push(name);
    if (sliceSpent()) await nextSlice();
  }
}

/** Logs a tick whenever a 1 ms timer runs: between two ticks is one turn of the event loop, as each here takes longer. */
function ticking(log: string[]): () => void {
  const timer = setInterval(() => log.push('|'), 1);
  return () => clearInterval(timer);
}

/** The most steps taken between two ticks of the timer. */
const mostStepsInATurn = (log: string[]) =>
  Math.max(
    ...log
      .join('')
      .split('|')
      .map((turn) => turn.length),
  );

// A budget holds at most 7 steps of a sixth of it (the last one crosses it).
const ONE_BUDGET = 7;

test('a loop that starts in a turn whose budget another loop spent takes one step, then waits for the next turn', async () => {
  await nextImmediate();
  const log: string[] = [];
  const stop = ticking(log);
  await nextSlice();
  // A spends a turn's budget; B starts right after it in the same turn, as a request's next step would.
  const a = async () => {
    do {
      step();
      log.push('a');
    } while (!sliceSpent());
  };
  await a().then(() => sliced('b', 12, log));
  stop();
  const turns = log.join('').split('|');
  const last = turns.findIndex((turn) => turn.includes('a'));
  assert.match(turns[last]!, /^a+b$/, log.join(''));
  assert.ok(mostStepsInATurn(log) <= ONE_BUDGET, log.join(''));
});

test('loops that wait in the same turn share the next turn budget', async () => {
  await nextImmediate();
  const log: string[] = [];
  const stop = ticking(log);
  await nextSlice();
  await Promise.all([sliced('a', 18, log), sliced('b', 18, log), sliced('c', 18, log)]);
  stop();
  // One loop spends the budget, the other two take a step each; with a budget each, 3 x 7.
  assert.ok(mostStepsInATurn(log) <= ONE_BUDGET + 2, log.join(''));
});
