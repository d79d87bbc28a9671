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

/** The young generation's growth factor this module last set, if any. */
let growthFactor: number | null = null;

function setGrowthFactor(factor: number): void {
  growthFactor = factor;
  setFlagsFromString(`--semi-space-growth-factor=${factor}`);
}

/**
 * Called with each worker thread started (thread-jobs.ts `startThread`): V8 raises the growth factor back to at least 2 while it
 * makes the worker's heap (the flag is the process's), which let the main young generation grow
 * past a hold or its cap at the next collection (measured: one bench-peers run in four went from
 * 16 to 32 MiB when the checkpoint thread started under load). Until the worker is online (its heap
 * made), a factor of 1 this module holds is set again every millisecond.
 */
export function keepYoungGenerationHeld(worker: Worker): void {
  // Neither held nor capped by this module (an operator's semi-space flag, or a process that is no gateway): nothing to keep.
  if (growthFactor === null) return;
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
 * V8's heap as a long-running gateway wants it: the old generation grows by 30% past what the
 * last full collection kept, not by up to 4x (at 50 connections peak RSS fell by about 15 MiB for
 * no measurable GC time; V8 reads this flag at each collection), and the young generation grows
 * under load up to 16 MiB (`capYoungGeneration`). Called by `gateway start` and the bench's gateway
 * once the gateway listens.
 */
export function tuneHeapForServing(): void {
  if (!startFlags().includes('heap-growing-percent')) setFlagsFromString('--heap-growing-percent=30');
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
 * A new isolate (a worker thread: the checkpoint and body threads) puts the factor back to 2 when
 * its heap is made: `keepYoungGenerationHeld` sets it again from the worker's start until it is
 * online. Nothing is done when the operator set a semi-space flag.
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
