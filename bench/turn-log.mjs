// Preloaded into the gateway by bench/huge-prompts.ts (Linux: /proc/thread-self/schedstat). A 1 ms
// timer looks at the main thread's time on the CPU; a gap between two ticks in which it ran 2 ms or
// more is appended to BENCH_TURN_LOG as "<monotonic ns at the tick> <ms on the CPU>". Unlike the
// event-loop delay gauge, this does not count time the process waited for a core.
import { closeSync, openSync, readSync, writeSync } from 'node:fs';

const log = openSync(process.env.BENCH_TURN_LOG, 'a');
const schedstat = openSync('/proc/thread-self/schedstat', 'r');
const buffer = Buffer.alloc(100);
const onCpuMs = () => Number(buffer.toString('latin1', 0, readSync(schedstat, buffer, 0, buffer.length, 0)).split(' ')[0]) / 1e6;
let last = onCpuMs();
const timer = setInterval(() => {
  const now = onCpuMs();
  if (now - last >= 2) writeSync(log, `${process.hrtime.bigint()} ${(now - last).toFixed(2)}\n`);
  last = now;
}, 1);
timer.unref();
process.once('exit', () => {
  closeSync(log);
  closeSync(schedstat);
});
