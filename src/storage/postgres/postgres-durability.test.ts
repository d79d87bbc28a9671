import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FlushBarrier } from './postgres-durability.ts';

/** A flush that the test ends by hand; `started` counts those begun. */
function manualFlush() {
  const pending: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];
  return {
    pending,
    flush: () => new Promise<void>((resolve, reject) => pending.push({ resolve, reject })),
  };
}

/** Lets the barrier's timers and promise callbacks run. */
const turn = async () => {
  for (let index = 0; index < 3; index++) await new Promise((resolve) => setTimeout(resolve, 1));
};

describe('flush barrier (settlements confirmed on disk)', () => {
  test('settlements waiting together share one flush', async () => {
    const { pending, flush } = manualFlush();
    const barrier = new FlushBarrier(flush, 0);
    const waits = [barrier.flushed(), barrier.flushed(), barrier.flushed()];
    await turn();
    assert.equal(pending.length, 1);
    pending[0]!.resolve();
    await Promise.all(waits);
  });

  test('one that arrives while a flush runs waits for the next: the running one may have begun before its commit', async () => {
    const { pending, flush } = manualFlush();
    const barrier = new FlushBarrier(flush, 0);
    const first = barrier.flushed();
    await turn();
    assert.equal(pending.length, 1);
    let laterDone = false;
    const later = barrier.flushed().then(() => (laterDone = true));
    pending[0]!.resolve();
    await first;
    await turn();
    assert.equal(laterDone, false, 'not confirmed by the flush that was already running');
    assert.equal(pending.length, 2, 'a second flush was started for it');
    pending[1]!.resolve();
    await later;
  });

  test('a flush that fails rejects its waiters; the next call starts another', async () => {
    const { pending, flush } = manualFlush();
    const barrier = new FlushBarrier(flush, 0);
    const failed = barrier.flushed();
    await turn();
    pending[0]!.reject(new Error('connection lost'));
    await assert.rejects(failed, /connection lost/);
    const again = barrier.flushed();
    await turn();
    assert.equal(pending.length, 2);
    pending[1]!.resolve();
    await again;
  });
});
