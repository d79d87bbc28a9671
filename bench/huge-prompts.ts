/**
 * Multi-megabyte prompts against a gateway in its own process: how long until each is refused
 * (too large for fast/echo's 128K tokens) or admitted (fast/vast has room), the gateway's
 * longest event-loop stall meanwhile (what any other request would have waited at most), its main
 * thread's longest turn on the CPU (the stall without the time it waited for a core), and the
 * slowest and median round trips of a bystander listing models meanwhile (authenticated, answered
 * by the gateway alone), beside the same over about as long just before. `npm run bench:huge`; BENCH_HUGE_MIB sets the size (5), BENCH_CPU_PROF a
 * directory for the gateway's CPU profile, BENCH_HUGE_ONLY a part of the names of the prompts to send (all), BENCH_HUGE_REPEAT
 * how many times each is sent to each model (1).
 */
import { once } from 'node:events';
import http from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { hugePrompts } from '../test/helpers/huge-prompts.ts';
import { startChild, stopAllChildren } from './children.ts';
import { compiledGatewayProcess } from './compiled-gateway.ts';

const SIZE = Number(process.env.BENCH_HUGE_MIB ?? 5) * 1024 * 1024;

const PROMPTS = hugePrompts(SIZE).filter(({ name }) => name.includes(process.env.BENCH_HUGE_ONLY ?? ''));
const REPEAT = Number(process.env.BENCH_HUGE_REPEAT ?? 1);

const directory = await mkdtemp(join(tmpdir(), 'bench-huge-'));
try {
  const upstream = await startChild<{ url: string }>('bench/fast-upstream.ts', []);
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${resolve(process.env.BENCH_CPU_PROF)}`] : [];
  // The gateway's turns on the CPU (bench/turn-log.mjs), read back for each huge request's span.
  const turnLog = join(directory, 'turns.log');
  const gateway = await startChild<{ url: string; key: string }>(
    await compiledGatewayProcess(),
    [upstream.info.url, directory],
    [...profile, '--import', resolve('bench/turn-log.mjs')],
    undefined,
    { ...process.env, BENCH_TURN_LOG: turnLog },
  );
  /** The gateway process's resident memory now and at its peak (VmRSS, VmHWM), in MiB. */
  const memory = async () => {
    const status = await readFile(`/proc/${gateway.process.pid}/status`, 'utf8').catch(() => '');
    const mib = (name: string) => (Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN) / 1024).toFixed(1);
    return { rss: mib('VmRSS'), peak: mib('VmHWM') };
  };
  const atStart = await memory();
  /** The main thread's longest turn on the CPU between two monotonic instants (ns), in ms; 0 when none reached 2 ms. */
  async function longestTurn(from: bigint, to: bigint): Promise<number> {
    let longest = 0;
    for (const line of (await readFile(turnLog, 'utf8').catch(() => '')).split('\n')) {
      const [at, ms] = line.split(' ');
      if (at && BigInt(at) >= from && BigInt(at) <= to) longest = Math.max(longest, Number(ms));
    }
    return longest;
  }
  // node:http, one write of the bytes: fetch (undici) spent 35-40 ms of its own on a 5 MiB body
  // before the gateway saw the request's headers (measured 2026-11-27), which the time below counted.
  const agent = new http.Agent({ keepAlive: true });
  const post = (body: Uint8Array) =>
    new Promise<{ status: number; body: Promise<void> }>((resolve, reject) => {
      const request = http.request(
        `${gateway.info.url}/v1/chat/completions`,
        {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${gateway.info.key}`, 'content-length': body.byteLength },
        },
        (response) => resolve({ status: response.statusCode ?? 0, body: once(response.resume(), 'end').then(() => undefined) }),
      );
      request.on('error', reject);
      request.end(body);
    });
  // The bystander runs on a thread of its own, so that sending 5 MiB here does not delay it.
  const bystanderThread = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
    let running = false;
    parentPort.on('message', async (command) => {
      if (command === 'stop') return (running = false);
      running = true;
      const times = [];
      while (running) {
        const started = performance.now();
        const response = await fetch(workerData.url, { headers: workerData.headers });
        await response.arrayBuffer();
        times.push(performance.now() - started);
      }
      times.sort((a, b) => a - b);
      parentPort.postMessage({ slowest: times.at(-1) ?? 0, median: times[Math.floor(times.length / 2)] ?? 0 });
    });`,
    {
      eval: true,
      workerData: {
        // An authenticated request that stays in the gateway: the upstream is busy reading the huge one.
        url: `${gateway.info.url}/v1/models`,
        headers: { authorization: `Bearer ${gateway.info.key}` },
      },
    },
  );
  /** Small requests one after another until `until` settles: the slowest round trip and the median one, in ms. */
  async function bystander(until: Promise<unknown>): Promise<{ slowest: number; median: number }> {
    bystanderThread.postMessage('start');
    await until.catch(() => {});
    bystanderThread.postMessage('stop');
    return (await once(bystanderThread, 'message'))[0] as { slowest: number; median: number };
  }
  const roundTrips = ({ slowest, median }: { slowest: number; median: number }) => `${slowest.toFixed(1)} / ${median.toFixed(1)}`;
  /** The gateway's longest event-loop stall since the last call, in ms (prom-client resets it on every scrape). */
  async function longestStall(): Promise<number> {
    const text = await (await fetch(`${gateway.info.url}/metrics`)).text();
    const line = text.split('\n').find((entry) => entry.startsWith('gateway_nodejs_eventloop_lag_max_seconds'));
    return Number(line?.split(' ').at(-1)) * 1000;
  }

  // What any step that makes a string of the prompt's size costs on this machine, at least: fresh
  // memory; writing the same memory again is what it costs where memory is reused.
  const timed = (write: () => void) => {
    const started = performance.now();
    write();
    return (performance.now() - started).toFixed(1);
  };
  const tries = [1, 2, 3].map(() => {
    const memory = Buffer.allocUnsafe(SIZE);
    return [timed(() => memory.fill(1)), timed(() => memory.fill(2))];
  });
  console.log(
    `Writing ${SIZE / 1024 / 1024} MiB of fresh memory took ${tries.map(([fresh]) => fresh).join(', ')} ms, ` +
      `writing it again ${tries.map(([, again]) => again).join(', ')} ms (three tries).\n`,
  );
  // A gateway in service has answered requests before a huge one comes: one short request to each
  // model first, so that the times below are the huge prompts' and not the process's first request's
  // (its code compiled, its first receipt written: 13-28 ms more on the first refusal, measured).
  for (const model of ['fast/echo', 'fast/vast']) {
    const response = await post(new TextEncoder().encode(JSON.stringify({ model, max_tokens: 10, messages: [{ role: 'user', content: 'Hello.' }] })));
    await response.body;
    if (response.status !== 200) throw new Error(`the warm-up request to ${model} was answered ${response.status}`);
  }
  console.log('Warmed up with one short request to each model; the first huge prompt is still the first the gateway sees.\n');
  // The gauge is the longest gap between two ticks of a 10 ms timer: idle, it reads ~10 ms. What a
  // request held the loop for is the reading above that idle reading.
  console.log(
    `| ${SIZE / 1024 / 1024} MiB prompt | model | status | decided in ms | answered in ms | longest block, ms (gauge meanwhile / idle) | longest turn on the CPU, ms | bystander's slowest / median, ms (before) |`,
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const { name, make } of PROMPTS) {
    const content = make();
    for (const model of Array.from({ length: REPEAT }, () => ['fast/echo', 'fast/vast']).flat()) {
      // Encoded before the clock starts, as a client holding the bytes sends them: the time is the gateway's, not this
      // process's encoding of 5 MiB (20-70 ms here, in fresh memory).
      const body = new TextEncoder().encode(JSON.stringify({ model, max_tokens: 10, messages: [{ role: 'user', content }] }));
      await longestStall();
      // The bystander's slowest round trip over about as long as a huge request takes, before one.
      const before = await bystander(new Promise((resolve) => setTimeout(resolve, 300)));
      await new Promise((resolve) => setTimeout(resolve, 200));
      const idle = await longestStall();
      const started = performance.now();
      const startedAt = process.hrtime.bigint();
      let status = 0;
      let headersMs = 0;
      const call = post(body).then(async (response) => {
        status = response.status;
        headersMs = performance.now() - started;
        await response.body;
        return performance.now() - started;
      });
      const [answeredMs, meanwhile] = await Promise.all([call, bystander(call)]);
      // Refused: when its answer came. Admitted: when the upstream had the request's headers (the
      // same clock in both processes), before it read and parsed the 5 MiB and answered.
      const upstreamAt = ((await (await fetch(`${upstream.info.url}/bench/large-request-at`)).json()) as { at: number | null }).at;
      const decided =
        status !== 200 ? headersMs.toFixed(0) : upstreamAt === null ? '—' : (upstreamAt - (performance.timeOrigin + started)).toFixed(0);
      const stall = await longestStall();
      const block = Math.max(0, stall - idle);
      // The log is written on the gateway's next tick: wait for it before reading the span.
      await new Promise((resolve) => setTimeout(resolve, 20));
      const turn = await longestTurn(startedAt, process.hrtime.bigint());
      console.log(
        `| ${name} | ${model} | ${status} | ${decided} | ${answeredMs.toFixed(0)} | ${block.toFixed(1)} (${stall.toFixed(1)} / ${idle.toFixed(1)}) | ${turn.toFixed(1)} | ${roundTrips(meanwhile)} (${roundTrips(before)}) |`,
      );
    }
  }
  await bystanderThread.terminate();
  const atEnd = await memory();
  console.log(
    `\nGateway RSS (its threads included): ${atStart.rss} MiB before the prompts, ${atEnd.rss} MiB after them, ${atEnd.peak} MiB at its peak.`,
  );
} finally {
  await stopAllChildren();
  await rm(directory, { recursive: true, force: true });
}
