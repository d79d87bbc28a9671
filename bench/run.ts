/**
 * `npm run bench`: the gateway's own overhead, against a fake upstream that answers at once
 * on loopback. Prints Markdown for the README; exits non-zero if any request failed.
 *
 * Environment (all optional):
 *   BENCH_REQUESTS       measured non-streaming requests at concurrency (10000; streaming runs half)
 *   BENCH_CONCURRENCY    requests in flight in the concurrent phases (16)
 *   BENCH_WARMUP         warm-up requests before each concurrent phase (2000, at most a fifth of BENCH_REQUESTS)
 *   BENCH_SEQUENTIAL     requests per side at concurrency 1 (2000, at most a fifth of BENCH_REQUESTS)
 *   BENCH_PHASE_SECONDS  a phase stops issuing requests after this long (30)
 *   BENCH_MODEL          model sent to the gateway (svc/fast)
 *   BENCH_CPU_PROF       a directory: run the gateway with --cpu-prof and write its profile there
 *   BENCH_DATABASE_URL   a PostgreSQL server: afterwards, the ledger at scale (bench/ledger-scale.ts:
 *                        SQLite beside PostgreSQL + Redis, then three processes on one account)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { cpuMs, startChild, stopAllChildren } from './children.ts';
import { compiledGatewayProcess } from './compiled-gateway.ts';
import { ledgerScaleBench } from './ledger-scale.ts';
import { createPool, runLoad, type LoadResult, type Target } from './load.ts';
import { intEnv } from './int-env.ts';
import { ms, percentiles } from './stats.ts';

const REQUESTS = intEnv('BENCH_REQUESTS', 10_000);
const STREAM_REQUESTS = Math.max(1, Math.floor(REQUESTS / 2));
const CONCURRENCY = intEnv('BENCH_CONCURRENCY', 16);
const WARMUP = intEnv('BENCH_WARMUP', Math.max(1, Math.min(2_000, Math.floor(REQUESTS / 5))));
const SEQUENTIAL = intEnv('BENCH_SEQUENTIAL', Math.max(1, Math.min(2_000, Math.floor(REQUESTS / 5))));
const PHASE_MS = intEnv('BENCH_PHASE_SECONDS', 30) * 1_000;
const MODEL = process.env.BENCH_MODEL ?? 'svc/fast';
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF;
/** Whatever happens, the whole run ends by then (the ledger phases, when asked for, get more). */
const TOTAL_MS = process.env.BENCH_DATABASE_URL ? 300_000 : 110_000;
/** Sequential phases alternate direct and gateway in this many rounds, so drift hits both alike. */
const ROUNDS = 4;

// Issue 16's targets: CPU per request (16 streamed chunks there, fewer here) and added first byte at c=1.
const TARGET_CPU_MS = 0.2;
const TARGET_STREAM_CPU_MS = 0.3;
const TARGET_FIRST_BYTE_MS = 0.5;

function requestBody(stream: boolean): string {
  return JSON.stringify({
    model: MODEL,
    messages: [
      { role: 'system', content: 'You are a terse assistant.' },
      { role: 'user', content: 'Say hello in five words.' },
    ],
    max_tokens: 64,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  });
}

interface Row {
  phase: string;
  concurrency: number;
  result: LoadResult;
  cpuPerRequestMs?: number;
}

function merge(results: LoadResult[]): LoadResult {
  const concat = (pick: (result: LoadResult) => Float64Array) => {
    const all = new Float64Array(results.reduce((sum, result) => sum + pick(result).length, 0));
    let at = 0;
    for (const result of results) {
      all.set(pick(result), at);
      at += pick(result).length;
    }
    return all;
  };
  return {
    completed: results.reduce((sum, result) => sum + result.completed, 0),
    errors: results.reduce((sum, result) => sum + result.errors, 0),
    errorSamples: results.flatMap((result) => result.errorSamples).slice(0, 5),
    elapsedMs: results.reduce((sum, result) => sum + result.elapsedMs, 0),
    timedOut: results.some((result) => result.timedOut),
    latencies: concat((result) => result.latencies),
    firstByte: concat((result) => result.firstByte),
  };
}

const dbDirectory = await mkdtemp(join(os.tmpdir(), 'gateway-bench-'));
const pools: Target['pool'][] = [];
let cleaned: Promise<void> | null = null;
const cleanup = () =>
  (cleaned ??= (async () => {
    await Promise.allSettled(pools.map((pool) => pool.destroy()));
    await stopAllChildren();
    await rm(dbDirectory, { recursive: true, force: true });
  })());

/** Set when the run is cut short: no report then, only cleanup and a non-zero exit. */
let abandoned = false;
function abandon(reason: string, code: number): void {
  if (abandoned) return;
  abandoned = true;
  console.error(`bench: ${reason}`);
  void cleanup().finally(() => process.exit(code));
}
setTimeout(() => abandon(`still running after ${TOTAL_MS / 1000} s; giving up`, 1), TOTAL_MS).unref();
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => abandon(`interrupted (${signal})`, 130));

const progress = (phase: string) => abandoned || process.stderr.write(`bench: ${phase}...\n`);

const rows: Row[] = [];
let warmupErrors = 0;
const warmupSamples: string[] = [];

async function bench(): Promise<void> {
  const upstream = await startChild<{ url: string; pid: number }>('bench/fast-upstream.ts', []);
  const profile = CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${resolve(CPU_PROF_DIR)}`] : [];
  const gateway = await startChild<{ url: string; key: string; pid: number }>(
    await compiledGatewayProcess(),
    [upstream.info.url, dbDirectory],
    profile,
  );
  const gatewayPid = gateway.process.pid!;
  if (gateway.info.pid !== gatewayPid) throw new Error(`gateway reported pid ${gateway.info.pid}, spawned ${gatewayPid}`);

  const json = { 'content-type': 'application/json' };
  const direct: Target = { pool: createPool(upstream.info.url, CONCURRENCY), path: '/v1/chat/completions', headers: json };
  const viaGateway: Target = {
    pool: createPool(gateway.info.url, CONCURRENCY),
    path: '/v1/chat/completions',
    headers: { ...json, authorization: `Bearer ${gateway.info.key}` },
  };
  pools.push(direct.pool, viaGateway.pool);

  for (const stream of [false, true]) {
    const kind = stream ? 'streaming' : 'non-streaming';
    const body = requestBody(stream);
    const load = (target: Target, concurrency: number, requests: number) =>
      runLoad(target, { stream, body, concurrency, requests, timeLimitMs: PHASE_MS });
    const warm = async (target: Target) => {
      const result = await load(target, CONCURRENCY, WARMUP);
      warmupErrors += result.errors;
      warmupSamples.push(...result.errorSamples);
    };
    const measured = stream ? STREAM_REQUESTS : REQUESTS;

    progress(`${kind}, concurrency ${CONCURRENCY}`);
    await warm(direct);
    rows.push({ phase: `direct, ${kind}`, concurrency: CONCURRENCY, result: await load(direct, CONCURRENCY, measured) });
    await warm(viaGateway);
    const cpuBefore = cpuMs(gatewayPid);
    const result = await load(viaGateway, CONCURRENCY, measured);
    const cpuPerRequestMs = (cpuMs(gatewayPid) - cpuBefore) / Math.max(1, result.completed);
    rows.push({ phase: `gateway, ${kind}`, concurrency: CONCURRENCY, result, cpuPerRequestMs });

    progress(`${kind}, concurrency 1`);
    const directRuns: LoadResult[] = [];
    const gatewayRuns: LoadResult[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const count = Math.floor(SEQUENTIAL / ROUNDS) + (round < SEQUENTIAL % ROUNDS ? 1 : 0);
      if (count === 0) continue;
      directRuns.push(await load(direct, 1, count));
      gatewayRuns.push(await load(viaGateway, 1, count));
    }
    rows.push({ phase: `direct, ${kind}`, concurrency: 1, result: merge(directRuns) });
    rows.push({ phase: `gateway, ${kind}`, concurrency: 1, result: merge(gatewayRuns) });
  }
}

function find(phase: string, concurrency: number): Row {
  return rows.find((row) => row.phase === phase && row.concurrency === concurrency)!;
}

function report(): number {
  const cpu = os.cpus();
  const lines: string[] = [];
  lines.push(`Machine: ${cpu[0]?.model ?? 'unknown CPU'}, ${cpu.length} cores, Node ${process.version}, ${os.platform()} ${os.release()}`);
  lines.push(
    `Load: undici Pool with keep-alive on loopback; ${CONCURRENCY} in flight for ${REQUESTS} non-streaming / ${STREAM_REQUESTS} streaming requests after ${WARMUP} warm-up; ${SEQUENTIAL} sequential requests per side at concurrency 1. Model ${MODEL}; auth, routing and SQLite receipts on.`,
  );
  lines.push('');
  lines.push(
    '| Phase | Concurrency | Requests | Errors | Req/s | Latency p50 (ms) | Latency p99 (ms) | First byte p50 (ms) | First byte p99 (ms) | Gateway CPU/req (ms) |',
  );
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) {
    const { result } = row;
    const latency = percentiles(result.latencies);
    const firstByte = row.phase.includes('non-streaming') ? undefined : percentiles(result.firstByte);
    const rate = (result.completed / result.elapsedMs) * 1000;
    lines.push(
      `| ${row.phase} | ${row.concurrency} | ${result.completed}${result.timedOut ? ' (time limit)' : ''} | ${result.errors} | ${rate.toFixed(0)} | ` +
        `${ms(latency.p50)} | ${ms(latency.p99)} | ${firstByte ? ms(firstByte.p50) : '—'} | ${firstByte ? ms(firstByte.p99) : '—'} | ` +
        `${row.cpuPerRequestMs === undefined ? '—' : ms(row.cpuPerRequestMs)} |`,
    );
  }

  const added = (kind: string, pick: (result: LoadResult) => Float64Array) => {
    const gateway = percentiles(pick(find(`gateway, ${kind}`, 1).result));
    const direct = percentiles(pick(find(`direct, ${kind}`, 1).result));
    return { p50: gateway.p50 - direct.p50, p99: gateway.p99 - direct.p99 };
  };
  const addedPlain = added('non-streaming', (result) => result.latencies);
  const addedStream = added('streaming', (result) => result.latencies);
  const addedFirstByte = added('streaming', (result) => result.firstByte);
  const cpuPlain = find('gateway, non-streaming', CONCURRENCY).cpuPerRequestMs!;
  const cpuStream = find('gateway, streaming', CONCURRENCY).cpuPerRequestMs!;
  const verdict = (value: number, target: number) => (value < target ? 'PASS' : 'MISS');

  lines.push('');
  lines.push('| Gateway overhead | Measured | Target | Result |');
  lines.push('|---|---:|---:|---|');
  lines.push(
    `| CPU per request, non-streaming (c=${CONCURRENCY}) | ${ms(cpuPlain)} ms | < ${TARGET_CPU_MS} ms | ${verdict(cpuPlain, TARGET_CPU_MS)} |`,
  );
  lines.push(
    `| CPU per request, streaming (c=${CONCURRENCY}) | ${ms(cpuStream)} ms | < ${TARGET_STREAM_CPU_MS} ms | ${verdict(cpuStream, TARGET_STREAM_CPU_MS)} |`,
  );
  // A whole non-streamed answer is its first byte and more: held to the first-byte target.
  lines.push(
    `| Added latency p50 / p99, non-streaming (c=1) | ${ms(addedPlain.p50)} / ${ms(addedPlain.p99)} ms | p50 < ${TARGET_FIRST_BYTE_MS} ms | ${verdict(addedPlain.p50, TARGET_FIRST_BYTE_MS)} |`,
  );
  lines.push(`| Added latency p50 / p99, streaming, whole stream (c=1) | ${ms(addedStream.p50)} / ${ms(addedStream.p99)} ms | — | — |`);
  lines.push(
    `| Added time to first streamed byte p50 (c=1) | ${ms(addedFirstByte.p50)} ms | < ${TARGET_FIRST_BYTE_MS} ms | ${verdict(addedFirstByte.p50, TARGET_FIRST_BYTE_MS)} |`,
  );
  lines.push(`| Added time to first streamed byte p99 (c=1) | ${ms(addedFirstByte.p99)} ms | — | — |`);
  lines.push('');
  lines.push(
    'Gateway CPU/req: user + system time of the gateway process (all threads, from /proc) during the measured phase, divided by its requests. ' +
      'Added latency and first byte: gateway minus direct percentiles, both at concurrency 1. First byte: the first body chunk.',
  );
  console.log(lines.join('\n'));

  const errors = warmupErrors + rows.reduce((sum, row) => sum + row.result.errors, 0);
  if (errors > 0) {
    console.error(`\nbench: ${errors} request(s) failed (${warmupErrors} during warm-up). First failures:`);
    const samples = new Set([...warmupSamples, ...rows.flatMap((row) => row.result.errorSamples)]);
    for (const sample of [...samples].slice(0, 10)) console.error(`  ${sample}`);
  }
  return errors > 0 ? 1 : 0;
}

let exitCode = 1;
try {
  await bench();
  if (!abandoned) exitCode = report();
  if (!abandoned && process.env.BENCH_DATABASE_URL) exitCode = Math.max(exitCode, await ledgerScaleBench());
} catch (error) {
  if (!abandoned) console.error('bench failed:', error);
} finally {
  await cleanup();
}
if (!abandoned) process.exit(exitCode);
