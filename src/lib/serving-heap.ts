import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/** The V8 flags the process was started with (command line and NODE_OPTIONS): an operator's own values win. */
const startFlags = () => `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`;

/**
 * What `gateway` sets before it loads anything (bin/gateway.js, for every command): the young
 * generation keeps its first size until `tuneHeapForServing` lets it grow. Start-up's allocations
 * grew it to 8-16 MiB, and an idle gateway kept 7.4 MiB of it resident with 0.1 MiB in use.
 */
export function holdYoungGeneration(): void {
  if (!startFlags().includes('semi-space')) setFlagsFromString('--semi-space-growth-factor=1');
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
 * its heap is made. Until the next collection sets it again, a growth can slip through if that one
 * collection brings what survived since V8's last growth check past the young generation's size
 * (measured: one run in twenty of a test starting two workers, one run in four of the bench-peers
 * load, whose checkpoint thread starts once); the young generation is then 32 MiB, as without the
 * cap. Nothing is done when the operator set a semi-space flag.
 */
export function capYoungGeneration(mib = 16): void {
  if (startFlags().includes('semi-space')) return;
  const capBytes = mib * 1024 * 1024;
  // It may grow from here (holdYoungGeneration kept it small while the process started).
  setFlagsFromString('--semi-space-growth-factor=2');
  let holding = false;
  const observer = new PerformanceObserver(() => {
    const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
    if (young === undefined) return;
    if (young.space_size >= capBytes) {
      setFlagsFromString('--semi-space-growth-factor=1');
      holding = true;
    } else if (holding) {
      // V8 shrank it (the process was idle): it may grow again, up to the cap.
      setFlagsFromString('--semi-space-growth-factor=2');
      holding = false;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
}
