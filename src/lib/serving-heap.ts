import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import type { Worker } from 'node:worker_threads';

/** The V8 flags the process was started with (command line and NODE_OPTIONS): an operator's own values win. */
const startFlags = () => `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`;

/**
 * What `gateway` sets before it loads anything (bin/gateway.js, for every command): the young
 * generation keeps its first size until `tuneHeapForServing` lets it grow. Start-up's allocations
 * grew it to 8-16 MiB, and an idle gateway kept 7.4 MiB of it resident with 0.1 MiB in use.
 */
export function holdYoungGeneration(): void {
  if (!startFlags().includes('semi-space')) setGrowthFactor(1);
}

/** The young generation's growth factor this module set, if any. */
let growthFactor: number | null = null;
/** The old generation's growth (percent past what a full collection kept) this module set, if any. */
let heapGrowingPercent: number | null = null;
/** Threads starting with V8's own flag values (see `whileThreadStarts`). */
let threadsStarting = 0;

function setGrowthFactor(factor: number): void {
  growthFactor = factor;
  applyFlags();
}

/** Sets this module's flags in V8, unless a thread is starting with V8's own. */
function applyFlags(): void {
  if (threadsStarting > 0) return;
  const flags = [];
  if (growthFactor !== null) flags.push(`--semi-space-growth-factor=${growthFactor}`);
  if (heapGrowingPercent !== null) flags.push(`--heap-growing-percent=${heapGrowingPercent}`);
  if (flags.length > 0) setFlagsFromString(flags.join(' '));
}

/**
 * Called with each worker thread started (thread-jobs.ts `startThread`). Node compiled its own
 * modules ahead of time (a code cache in the node binary), and a new thread uses that code only
 * while every V8 flag has V8's own value: otherwise it compiles Node's internals from their
 * sources. Measured on the development VM, a bare worker was online in 30-44 ms with V8's values
 * and in 71-96 ms with `--heap-growing-percent=30` set, or with the growth factor set once while
 * it started; the gateway's body thread in 60-94 ms, so that the process's first huge prompt was
 * answered in 120-184 ms, against 81-113 with V8's values while the thread starts.
 *
 * So for a thread a request waits for (`awaited`: the body thread), and for any thread while the
 * young generation is free to grow, V8's values hold from the thread's start until it is online,
 * and this module's are set again then. Collections meanwhile may grow the young generation past
 * its cap (it grows no further once the flags are back, and V8 shrinks it once the process idles).
 * A thread started in the background while the young generation is held (the gateway starting)
 * or at its cap (under load) starts slower instead: this module's flags stay, the growth factor
 * set again every millisecond until the thread is online, since V8 sets it back to 2 as it makes
 * the thread's heap (measured: one bench-peers run in four went from 16 to 32 MiB when the
 * checkpoint thread started under load).
 */
export function whileThreadStarts(worker: Worker, awaited: boolean): void {
  if (growthFactor === 1 && !awaited) return keepYoungGenerationHeld(worker);
  // Nothing set by this module (an operator's own flags, or a process that is no gateway): V8's values hold.
  if (growthFactor === null && heapGrowingPercent === null) return;
  if (threadsStarting++ === 0) {
    const defaults = [growthFactor === null ? '' : '--semi-space-growth-factor=2', heapGrowingPercent === null ? '' : '--heap-growing-percent=0'];
    setFlagsFromString(defaults.join(' '));
  }
  let started = false;
  const done = () => {
    if (started) return;
    started = true;
    threadsStarting--;
    applyFlags();
  };
  worker.once('online', done);
  worker.once('exit', done);
}

function keepYoungGenerationHeld(worker: Worker): void {
  // The heap is made early in the worker's start, ~40 ms before it is online, and under load the
  // main thread collects several times meanwhile.
  const hold = setInterval(() => {
    if (growthFactor === 1) setGrowthFactor(1);
  }, 1);
  hold.unref();
  const done = () => {
    clearInterval(hold);
    if (growthFactor === 1) setGrowthFactor(1);
  };
  worker.once('online', done);
  worker.once('exit', done);
}

/**
 * How far the old generation grows past what the last full collection kept before the next one:
 * a bound on V8's own choice (up to 4x), per store. The embedded mode collects rarely under load
 * and keeps 30%: at 100% its peak RSS rose from 146-149 to 157-160 MiB (wrk, bench-peers' mock and
 * bodies, 50 connections, JSON and streams; two alternated pairs, 2026-11-28) for no CPU. The PostgreSQL mode promotes more (its requests
 * live longer: holds journaled in Redis, settlements awaiting their batch's commit): at 30% it ran a
 * full collection every ~0.4 s under load (30 in 13 s against 16 at 100%), ~6% more CPU per
 * request (ledger bench, four runs each alternated: 1.12-1.16x SQLite's CPU at 30%, 1.03-1.09x at
 * 100%), and a scale-out process is sized for throughput more than for its last 10 MiB.
 */
const OLD_GENERATION_GROWTH_PERCENT = { sqlite: 30, postgres: 100 } as const;

/**
 * V8's heap as a long-running gateway wants it: the old generation grows by
 * OLD_GENERATION_GROWTH_PERCENT (for its store) past what the last full collection kept, not by
 * up to 4x (V8 reads this flag at each collection), and the young generation grows under load up
 * to 16 MiB (`capYoungGeneration`). Called by `gateway start` and the bench's gateway once the
 * gateway listens.
 */
export function tuneHeapForServing(store: keyof typeof OLD_GENERATION_GROWTH_PERCENT): void {
  if (!startFlags().includes('heap-growing-percent')) {
    heapGrowingPercent = OLD_GENERATION_GROWTH_PERCENT[store];
    applyFlags();
  }
  capYoungGeneration();
}

/**
 * Keeps V8's young generation at `mib` (both semi-spaces), not the 32 MiB it grows to by default
 * under load: at 50 connections that is 16 MiB less resident memory at the peak, for no measured
 * CPU (objects of a request in flight still die young at this size; at half of it, more of them
 * are promoted and scavenges cost about a fifth more CPU per request).
 *
 * `--max-semi-space-size` would say this, but V8 reads it only when the heap is made, so it cannot
 * come from the process itself. The growth factor is read at each growth: once the young
 * generation reaches `mib` it is set to 1 (no growth), after every collection that finds it there,
 * and back to V8's 2 once V8 has shrunk it (after a while idle), so that it grows back under load.
 * A new isolate (a worker thread: the checkpoint, body and counting threads) puts the factor back
 * to 2 when its heap is made: see `whileThreadStarts`. Nothing is done when the operator set a
 * semi-space flag.
 */
export function capYoungGeneration(mib = 16): void {
  if (startFlags().includes('semi-space')) return;
  const capBytes = mib * 1024 * 1024;
  // It may grow from here (holdYoungGeneration kept it small while the process started).
  setGrowthFactor(2);
  const observer = new PerformanceObserver(() => {
    const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
    if (young === undefined) return;
    if (young.space_size >= capBytes) setGrowthFactor(1);
    // V8 shrank it (the process was idle): it may grow again, up to the cap.
    else if (growthFactor === 1) setGrowthFactor(2);
  });
  observer.observe({ entryTypes: ['gc'] });
}
