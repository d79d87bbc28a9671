import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ThreadJobs, threadEntry } from './thread-jobs.ts';

// The body thread answers a JSON body: a job that needs no more than a thread to run.
const entry = threadEntry('json-body-thread', new URL('../http/body/parse-json-body.ts', import.meta.url).href);

async function parse(jobs: ThreadJobs<{ id: number; body?: unknown }>, text: string): Promise<unknown> {
  const { id, reply } = jobs.open();
  const bytes = new TextEncoder().encode(text);
  jobs.post({ id, end: true, bytes: bytes.buffer, length: bytes.length, maxDepth: 64 });
  return (await reply).body;
}

test('a thread stops once idle for its time, giving its memory back, and the next job starts it again', async () => {
  let stops = 0;
  const jobs = new ThreadJobs<{ id: number; body?: unknown }>(entry, 'test', 1_000, { onStop: () => stops++ });
  assert.equal(jobs.started, false);
  assert.deepEqual(await parse(jobs, '{"a":1}'), { a: 1 });
  const worker = jobs.start();
  // Jobs closer together than the idle time keep it: each one starts the idle time again.
  for (let index = 0; index < 3; index++) {
    await sleep(50);
    assert.deepEqual(await parse(jobs, `[${index}]`), [index]);
  }
  assert.equal(jobs.start(), worker, 'the same thread');
  // Idle, the thread holds the process no more than its timer does: this test's own timer waits.
  for (let waited = 0; jobs.started && waited < 20_000; waited += 100) await sleep(100);
  assert.equal(jobs.started, false);
  assert.equal(stops, 1, 'what was kept for the thread is given up with it');
  assert.deepEqual(await parse(jobs, '"again"'), 'again');
  assert.notEqual(jobs.start(), worker, 'a new thread');
});

test('a thread that fails rejects its pending jobs, and the next job starts a fresh one', async () => {
  let stops = 0;
  const jobs = new ThreadJobs<{ id: number; body?: unknown }>(entry, 'test', 60_000, { onStop: () => stops++ });
  const worker = jobs.start();
  const { reply } = jobs.open();
  await worker.terminate();
  await assert.rejects(reply, /the test thread exited/);
  assert.equal(stops, 1);
  assert.deepEqual(await parse(jobs, '{"b":2}'), { b: 2 });
  await jobs.start().terminate();
});
