import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';

// V8's flags are the process's: each case runs in a process of its own. A request's worth of
// objects survives a collection or two, which makes the young generation grow. The child prints
// the largest young generation under load, then (with IDLE) the size V8 shrank it to while idle and
// the largest under the same load again. With WORKER, a worker thread (startThread) starts before the first load
// and before one more load at the end (its size is printed last).
const CHILD = `
import { once } from 'node:events';
import { getHeapSpaceStatistics } from 'node:v8';
import { setImmediate as turn, setTimeout as sleep } from 'node:timers/promises';
import { capYoungGeneration, holdYoungGeneration } from ${JSON.stringify(new URL('./serving-heap.ts', import.meta.url).href)};
import { startThread } from ${JSON.stringify(new URL('./thread-jobs.ts', import.meta.url).href)};
if (process.env.HOLD === '1') holdYoungGeneration();
if (process.env.CAP === '1') capYoungGeneration(16);
async function startWorker() {
  if (process.env.WORKER !== '1') return;
  const worker = startThread('setTimeout(() => {}, 60_000)', { eval: true });
  await once(worker, 'online');
  worker.unref();
}
await startWorker();
const young = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size / 1048576;
const atStart = young();
async function load() {
  const kept = [];
  let largest = 0;
  for (let round = 0; round < 4_000; round++) {
    const batch = [];
    for (let index = 0; index < 2_000; index++) batch.push({ index, text: 'x' + index });
    kept.push(batch);
    if (kept.length > 5) kept.shift();
    await turn();
    largest = Math.max(largest, young());
  }
  return largest;
}
const sizes = [await load()];
if (process.env.HOLD === '1') {
  // Start-up is over: the gateway serves, and the same load may grow it up to the cap.
  capYoungGeneration(16);
  sizes.unshift(atStart);
  sizes.push(await load());
}
if (process.env.IDLE === '1') {
  // V8 shrinks the young generation at a collection once little was allocated for a few seconds.
  for (let waited = 0; young() >= sizes[0] && waited < 30; waited++) {
    await sleep(1_000);
    globalThis.gc();
  }
  sizes.push(young(), await load());
}
if (process.env.WORKER === '1') {
  await startWorker();
  sizes.push(await load());
}
console.log(sizes.join(' '));
`;

async function youngGenerationMib(
  cap: boolean,
  options: { nodeOptions?: string; idle?: boolean; hold?: boolean; worker?: boolean } = {},
): Promise<number[]> {
  const args = ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', CHILD];
  const { stdout } = await promisify(execFile)(process.execPath, args, {
    env: {
      ...process.env,
      CAP: cap ? '1' : '0',
      IDLE: options.idle ? '1' : '0',
      HOLD: options.hold ? '1' : '0',
      WORKER: options.worker ? '1' : '0',
      NODE_OPTIONS: options.nodeOptions ?? '',
    },
  });
  return stdout.trim().split(' ').map(Number);
}

test('the young generation stays at its cap', async () => {
  assert.deepEqual(await youngGenerationMib(false), [32], 'uncapped, this load grows it to V8 default of 32 MiB');
  assert.deepEqual(await youngGenerationMib(true), [16]);
});

test('shrunk by V8 while idle, the young generation grows back to its cap under load', async () => {
  const [loaded, idle, loadedAgain] = await youngGenerationMib(true, { idle: true });
  assert.equal(loaded, 16);
  assert.ok(idle! < 16, `V8 shrank it while idle (${idle} MiB)`);
  assert.equal(loadedAgain, 16);
});

test("an operator's own young-generation flag wins over the cap", async () => {
  assert.deepEqual(await youngGenerationMib(true, { nodeOptions: '--max-semi-space-size=16' }), [32]);
});

test('held while the process starts, the young generation keeps its first size, then grows to its cap once serving', async () => {
  const [atHold, starting, serving] = await youngGenerationMib(false, { hold: true });
  assert.ok(atHold! < 16, `${atHold} MiB when held`);
  assert.equal(starting, atHold, 'held: it did not grow under the load that grows it to 32 unheld');
  assert.equal(serving, 16);
  const [, ...operator] = await youngGenerationMib(false, { hold: true, nodeOptions: '--max-semi-space-size=16' });
  assert.deepEqual(operator, [32, 32], "an operator's flag wins");
});

test('a worker thread started meanwhile does not let the young generation grow past its hold or its cap', async () => {
  // V8 raises the (process-wide) growth factor back to 2 as it makes each worker's heap.
  const [atHold, starting, serving, afterWorker] = await youngGenerationMib(false, { hold: true, worker: true });
  assert.equal(starting, atHold, 'still held after a worker started while the gateway started');
  assert.equal(serving, 16);
  assert.equal(afterWorker, 16, 'still at its cap after a worker started while serving');
});

// What a new thread checks Node's precompiled code against: V8's version and flags.
const THREAD_START_CHILD = `
import { once } from 'node:events';
import { cachedDataVersionTag } from 'node:v8';
import { setImmediate as turn } from 'node:timers/promises';
import { holdYoungGeneration, tuneHeapForServing } from ${JSON.stringify(new URL('./serving-heap.ts', import.meta.url).href)};
import { startThread } from ${JSON.stringify(new URL('./thread-jobs.ts', import.meta.url).href)};
const v8Own = cachedDataVersionTag();
async function tagsAroundThreadStart(awaited = false) {
  const worker = startThread('setTimeout(() => {}, 100)', { eval: true }, awaited);
  const starting = cachedDataVersionTag();
  await once(worker, 'online');
  await turn();
  const online = cachedDataVersionTag();
  await once(worker, 'exit');
  return { starting, online };
}
holdYoungGeneration();
const held = { tag: cachedDataVersionTag(), ...(await tagsAroundThreadStart()) };
const heldAwaited = await tagsAroundThreadStart(true);
tuneHeapForServing('sqlite');
const serving = { tag: cachedDataVersionTag(), ...(await tagsAroundThreadStart()) };
console.log(JSON.stringify({ v8Own, held, heldAwaited, serving }));
`;

test("a thread starts with V8's own flags, so that it runs Node's precompiled code, unless held in the background", async () => {
  const args = ['--import', 'tsx', '--input-type=module', '-e', THREAD_START_CHILD];
  const { stdout } = await promisify(execFile)(process.execPath, args, { env: { ...process.env, NODE_OPTIONS: '' } });
  const { v8Own, held, heldAwaited, serving } = JSON.parse(stdout);
  assert.notEqual(serving.tag, v8Own, 'serving, the gateway sets flags of its own');
  assert.equal(serving.starting, v8Own, "V8's own flags while the thread starts");
  assert.equal(serving.online, serving.tag, "the gateway's flags once it is online");
  assert.notEqual(held.tag, v8Own);
  // Held (the gateway starting), V8 sets the growth factor back as it makes the thread's heap and the hold sets it again.
  assert.equal(held.online, held.tag, "held, the flags are the gateway's once the thread is online");
  assert.equal(heldAwaited.starting, v8Own, "a thread a request waits for starts with V8's own flags even while held");
  assert.equal(heldAwaited.online, held.tag);
});
