/**
 * The ledger at scale: the embedded mode (SQLite) beside the scale-out mode (PostgreSQL + Redis)
 * in one run, then three gateway processes on one account. Run by `npm run bench` when
 * BENCH_DATABASE_URL is set (alone: `node --import tsx bench/ledger-scale.ts`).
 *
 * Environment:
 *   BENCH_DATABASE_URL       a PostgreSQL server (postgres://127.0.0.1:5432/test); a database
 *                            gateway_bench_<pid> is created on it and dropped at the end
 *   BENCH_REDIS_URL          Redis for the scale-out processes (redis://127.0.0.1:6379)
 *   BENCH_LEDGER_CONNECTIONS requests in flight in the loaded phases (50)
 *   BENCH_LEDGER_SECONDS     length of each loaded phase (6)
 *   BENCH_LEDGER_PIN=1       the one-process comparison as the issue measured it: the SQLite and the
 *                            PostgreSQL gateway each held to core 1 (every thread, with taskset),
 *                            this process (the load generator) to core 0; the database and Redis
 *                            stay free. Unpinned again before the three-process phases.
 *   BENCH_LEDGER_ROUNDS      alternated rounds of each comparison (2); more narrow a ratio on a
 *                            drifting machine, as each round pairs the two sides within seconds
 *   BENCH_LEDGER_THREE=0     skips the three-process phases (a quicker A/B of the one-process
 *                            comparison and concurrency 1)
 *   BENCH_LEDGER_LOAD=wrk    the loaded phases' requests sent by wrk (one process per gateway, one
 *                            thread) instead of this process: it spends less of the cores the
 *                            gateways share with it; p50 and p99 are then wrk's, per process
 *                            (the worst of them for three)
 *
 * Per phase it prints requests per second, gateway CPU per request (all gateway processes,
 * from /proc), and for PostgreSQL the database work per request (transactions and rows written,
 * from pg_stat_database of the bench's own database; CPU of the gateways' backends, from /proc
 * when the server runs on this host) and the lock waits of gateway backends sampled every 20 ms
 * from pg_stat_activity. And what shares the cores: this process's CPU per request (the load
 * generator) and how busy the whole machine was (/proc/stat).
 *
 * Every process serves one loaded phase (not measured) before it is measured: measured cold, its
 * JIT compilers' threads alone cost 0.2 to 0.4 ms of CPU a request more than a warm process's (on
 * 2026-11-27 the first PostgreSQL round, unwarmed, used 0.67 ms a request against 0.49 in the
 * second). The three and the one then alternate in BENCH_LEDGER_ROUNDS rounds, as the two modes do, so drift on
 * the box hits both alike.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { cpuMs, machineCpuMs, startChild, stopChild, type Child } from './children.ts';
import { compiledGatewayProcess } from './compiled-gateway.ts';
import { createPool, runLoad, type LoadResult, type Target } from './load.ts';
import { intEnv } from './int-env.ts';
import { runWrk } from './wrk-load.ts';
import { ms, percentiles } from './stats.ts';
import { DEFAULT_HOLD_JOURNAL_PREFIX } from '../src/storage/postgres/redis-hold-journal.ts';

type GatewayInfo = { url: string; key: string; pid: number };

const CONNECTIONS = intEnv('BENCH_LEDGER_CONNECTIONS', 50);
const PHASE_MS = intEnv('BENCH_LEDGER_SECONDS', 6) * 1_000;
const SEQUENTIAL_MS = Math.max(2_000, PHASE_MS / 2);
const ROUNDS = intEnv('BENCH_LEDGER_ROUNDS', 2);
const PIN = process.env.BENCH_LEDGER_PIN === '1';
const THREE = process.env.BENCH_LEDGER_THREE !== '0';
const WRK = process.env.BENCH_LEDGER_LOAD === 'wrk';

/** Holds every thread of `pid` (and those it starts later) to `cores` ("1", "0-1"). */
function pin(pid: number, cores: string): void {
  execFileSync('taskset', ['-a', '-cp', cores, String(pid)], { stdio: 'ignore' });
}

const BODY = JSON.stringify({
  model: 'svc/fast',
  messages: [
    { role: 'system', content: 'You are a terse assistant.' },
    { role: 'user', content: 'Say hello in five words. '.repeat(40) },
  ],
  max_tokens: 64,
});

/** Which comparison a phase belongs to. */
type PhaseKind = 'sqlite' | 'postgres' | 'three' | 'one';

interface Phase {
  name: string;
  kind: PhaseKind;
  processes: number;
  connections: number;
  result: LoadResult;
  cpuPerRequestMs?: number;
  /** Each gateway process's CPU divided by the requests it served. */
  cpuPerRequestByProcessMs: number[];
  /** This process (the load generator, and the lock-wait sampler's client) per request. */
  loadGeneratorCpuPerRequestMs: number;
  /** Share of the machine's CPU (all cores) that was busy, 0 to 1, and that CPU per request. */
  machineBusy: number;
  /** Each core's busy share, 0 to 1 (core 0 first). */
  coreBusy: number[];
  machineCpuPerRequestMs: number;
  database?: DatabaseWork;
  lockWaits?: LockWaits;
}

interface DatabaseWork {
  transactionsPerRequest: number;
  rowsWrittenPerRequest: number;
  /** CPU of the PostgreSQL backends serving the gateways (same host, from /proc), per request. */
  backendCpuPerRequestMs: number;
  /** Commands the Redis server ran (INFO commandstats, every client: the gateways alone during a phase), per request. */
  redisCommandsPerRequest: number;
}

interface LockWaits {
  samples: number;
  samplesWithWaiter: number;
  meanWaiters: number;
  /** Of those, waits for an account row (the waiter holds or queues for a tuple lock on accounts). */
  samplesWithAccountWaiter: number;
  meanAccountWaiters: number;
}

/** Runs `body` with loopback pools on `targets`, measuring CPU of `pids` and, when given, the database. */
async function phase(
  name: string,
  kind: PhaseKind,
  gateways: Array<Child<GatewayInfo>>,
  connections: number,
  timeLimitMs: number,
  observed?: Observed,
): Promise<Phase> {
  const database = observed?.database;
  const targets: Target[] = gateways.map((gateway) => ({
    pool: createPool(gateway.info.url, Math.ceil(connections / gateways.length)),
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${gateway.info.key}` },
  }));
  const load = (target: Target, index: number) => {
    const share = Math.floor(connections / gateways.length) + (index < connections % gateways.length ? 1 : 0);
    const { url, key } = gateways[index]!.info;
    if (WRK) return runWrk(url, key, BODY, share, timeLimitMs / 1000);
    return runLoad(target, { stream: false, body: BODY, concurrency: share, requests: 1_000_000, timeLimitMs });
  };
  // wrk runs as a child process: its CPU is counted once it has ended.
  const generatorCpuMs = () => cpuMs('self', true);
  try {
    // Warm: connections, prepared statements, JIT.
    await Promise.all(
      targets.map((target, index) => runLoad(target, { stream: false, body: BODY, concurrency: 4, requests: 200 + index, timeLimitMs: 3_000 })),
    );
    const pids = gateways.map((gateway) => gateway.process.pid!);
    const before = database ? await databaseCounters(database) : undefined;
    const redisBefore = observed ? await redisCommands(observed.redis) : 0;
    const backendsBefore = database ? await backendCpu(database) : undefined;
    const sampler = database && connections > 1 ? sampleLockWaits(database) : undefined;
    const cpuBefore = pids.map((pid) => cpuMs(pid));
    const selfBefore = generatorCpuMs();
    const machineBefore = machineCpuMs();
    const results = await Promise.all(targets.map((target, index) => load(target, index)));
    const machineAfter = machineCpuMs();
    const selfCpu = generatorCpuMs() - selfBefore;
    const cpuByProcess = pids.map((pid, index) => cpuMs(pid) - cpuBefore[index]!);
    const lockWaits = await sampler?.stop();
    const after = database ? await databaseCounters(database) : undefined;
    // Less the INFO that read `redisBefore`.
    const redisRan = observed ? (await redisCommands(observed.redis)) - redisBefore - 1 : 0;
    const backendsAfter = database ? await backendCpu(database) : undefined;
    const result = merge(results);
    const cpu = cpuByProcess.reduce((sum, value) => sum + value, 0);
    const completed = Math.max(1, result.completed);
    return {
      name,
      kind,
      processes: gateways.length,
      connections,
      result,
      cpuPerRequestMs: cpu / completed,
      cpuPerRequestByProcessMs: cpuByProcess.map((value, index) => value / Math.max(1, results[index]!.completed)),
      loadGeneratorCpuPerRequestMs: selfCpu / completed,
      machineBusy: (machineAfter.busy - machineBefore.busy) / Math.max(1, machineAfter.total - machineBefore.total),
      coreBusy: machineAfter.cores.map(
        (core, index) => (core.busy - machineBefore.cores[index]!.busy) / Math.max(1, core.total - machineBefore.cores[index]!.total),
      ),
      machineCpuPerRequestMs: (machineAfter.busy - machineBefore.busy) / completed,
      lockWaits,
      database:
        before && after
          ? {
              transactionsPerRequest: (after.transactions - before.transactions) / completed,
              rowsWrittenPerRequest: (after.rows - before.rows) / completed,
              backendCpuPerRequestMs: cpuBetween(backendsBefore!, backendsAfter!) / completed,
              redisCommandsPerRequest: redisRan / completed,
            }
          : undefined,
    };
  } finally {
    await Promise.allSettled(targets.map((target) => target.pool.destroy()));
  }
}

function merge(results: LoadResult[]): LoadResult {
  const latencies = new Float64Array(results.reduce((sum, result) => sum + result.latencies.length, 0));
  let at = 0;
  for (const result of results) {
    latencies.set(result.latencies, at);
    at += result.latencies.length;
  }
  return {
    completed: results.reduce((sum, result) => sum + result.completed, 0),
    errors: results.reduce((sum, result) => sum + result.errors, 0),
    errorSamples: results.flatMap((result) => result.errorSamples).slice(0, 5),
    elapsedMs: Math.max(...results.map((result) => result.elapsedMs)),
    timedOut: results.some((result) => result.timedOut),
    latencies,
    firstByte: latencies,
    summary: results.every((result) => result.summary)
      ? { p50: Math.max(...results.map((result) => result.summary!.p50)), p99: Math.max(...results.map((result) => result.summary!.p99)) }
      : undefined,
  };
}

/** What a PostgreSQL phase is observed through: the bench database, and a Redis connection of its own. */
interface Observed {
  database: pg.Client;
  redis: Redis;
}

/** Commands the Redis server has run since its statistics were last reset, every command and client. */
async function redisCommands(redis: Redis): Promise<number> {
  const text = await redis.info('commandstats');
  let calls = 0;
  for (const match of text.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)) calls += Number(match[1]);
  return calls;
}

async function databaseCounters(client: pg.Client): Promise<{ transactions: number; rows: number }> {
  // The statistics collector lags by up to its flush interval; a snapshot clear makes the read current in this backend.
  await client.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await client.query<{ transactions: string; rows: string }>(
    `SELECT xact_commit + xact_rollback AS transactions, tup_inserted + tup_updated + tup_deleted AS rows
     FROM pg_stat_database WHERE datname = current_database()`,
  );
  return { transactions: Number(rows[0]!.transactions), rows: Number(rows[0]!.rows) };
}

/** CPU so far of each PostgreSQL backend of the gateways (by pid; the server is on this host). */
async function backendCpu(client: pg.Client): Promise<Map<number, number>> {
  const { rows } = await client.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'model-gateway'",
  );
  const cpu = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      cpu.set(pid, cpuMs(pid));
    } catch {
      // Ended meanwhile.
    }
  }
  return cpu;
}

/** CPU spent between two readings by the backends of the second (a backend new since counts from 0). */
function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

/**
 * Every 20 ms: how many gateway backends wait on a lock, and how many of them on an account row.
 * A backend waiting for a row lock holds (first in line) or waits for the row's tuple lock, so
 * a waiter with a tuple lock on accounts waits on an account row; the others wait on something
 * else (a receipt's created_ns index entry another transaction took, a key row).
 */
function sampleLockWaits(client: pg.Client): { stop(): Promise<LockWaits> } {
  const waits: LockWaits = { samples: 0, samplesWithWaiter: 0, meanWaiters: 0, samplesWithAccountWaiter: 0, meanAccountWaiters: 0 };
  let total = 0;
  let totalOnAccounts = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const { rows } = await client.query<{ waiting: string; on_accounts: string }>(
        `SELECT count(*) AS waiting,
                count(*) FILTER (WHERE EXISTS (SELECT 1 FROM pg_locks l
                  WHERE l.pid = a.pid AND l.locktype = 'tuple' AND l.relation = 'accounts'::regclass)) AS on_accounts
         FROM pg_stat_activity a
         WHERE a.datname = current_database() AND a.application_name = 'model-gateway' AND a.wait_event_type = 'Lock'`,
      );
      const waiting = Number(rows[0]!.waiting);
      const onAccounts = Number(rows[0]!.on_accounts);
      waits.samples++;
      total += waiting;
      totalOnAccounts += onAccounts;
      if (waiting > 0) waits.samplesWithWaiter++;
      if (onAccounts > 0) waits.samplesWithAccountWaiter++;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      waits.meanWaiters = waits.samples ? total / waits.samples : 0;
      waits.meanAccountWaiters = waits.samples ? totalOnAccounts / waits.samples : 0;
      return waits;
    },
  };
}

/** Sequential requests alternating between targets, so drift hits each alike; returns p50/p99 per target. */
async function sequential(targets: Array<{ name: string; url: string; key?: string }>): Promise<Map<string, LoadResult[]>> {
  const pools = targets.map((target) => ({
    name: target.name,
    target: {
      pool: createPool(target.url, 1),
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json', ...(target.key ? { authorization: `Bearer ${target.key}` } : {}) },
    } satisfies Target,
  }));
  const runs = new Map<string, LoadResult[]>(targets.map((target) => [target.name, []]));
  try {
    for (let round = 0; round < 4; round++) {
      for (const { name, target } of pools) {
        runs.get(name)!.push(await runLoad(target, { stream: false, body: BODY, concurrency: 1, requests: 100_000, timeLimitMs: SEQUENTIAL_MS / 4 }));
      }
    }
  } finally {
    await Promise.allSettled(pools.map(({ target }) => target.pool.destroy()));
  }
  return runs;
}

const UNJOURNALED = 'PostgreSQL + Redis, holds in PostgreSQL';

/** The hold journal's keys of the bench's database (what processes stopped mid-request leave), gone with it. */
async function forgetJournal(observer: pg.Client, redisUrl: string): Promise<void> {
  const scope = (await observer.query<{ id: string }>('SELECT id FROM ledger_identity')).rows[0]?.id;
  if (!scope) return;
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    const keys = await redis.keys(`${DEFAULT_HOLD_JOURNAL_PREFIX}${scope}*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

function rate(result: LoadResult): number {
  return (result.completed / result.elapsedMs) * 1000;
}

export async function ledgerScaleBench(): Promise<number> {
  const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL;
  const redisUrl = process.env.BENCH_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  if (!adminUrl) {
    console.log('\n(ledger at scale: skipped; set BENCH_DATABASE_URL to a PostgreSQL server to compare the two modes)');
    return 0;
  }
  const databaseName = `gateway_bench_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${databaseName}`);
  const databaseUrl = new URL(adminUrl);
  databaseUrl.pathname = `/${databaseName}`;
  const observer = new pg.Client({ connectionString: databaseUrl.href, application_name: 'gateway-bench' });
  const observed: Observed = { database: observer, redis: new Redis(redisUrl, { maxRetriesPerRequest: 1 }) };
  const directory = await mkdtemp(join(os.tmpdir(), 'gateway-ledger-bench-'));
  const children: Array<Child<unknown>> = [];
  const progress = (text: string) => process.stderr.write(`bench: ${text}...\n`);
  const start = async (kind: 'sqlite' | 'postgres', index: number, extraEnv: NodeJS.ProcessEnv = {}) => {
    const env: NodeJS.ProcessEnv = { ...process.env, ...extraEnv };
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
    await mkdir(join(directory, `${kind}-${index}`), { recursive: true });
    if (kind === 'postgres') Object.assign(env, { DATABASE_URL: databaseUrl.href, REDIS_URL: redisUrl });
    const child = await startChild<GatewayInfo>(
      await compiledGatewayProcess(),
      [upstream.info.url, join(directory, `${kind}-${index}`)],
      [],
      30_000,
      env,
    );
    children.push(child);
    return child;
  };
  const upstream = await startChild<{ url: string; pid: number }>('bench/fast-upstream.ts', []);
  children.push(upstream);
  const phases: Phase[] = [];
  const sequentialRuns = new Map<string, LoadResult[]>();
  try {
    const sqlite = await start('sqlite', 0);
    const postgres = await start('postgres', 0);
    const allCores = `0-${os.cpus().length - 1}`;
    if (PIN) {
      pin(sqlite.process.pid!, '1');
      pin(postgres.process.pid!, '1');
      pin(process.pid, '0');
    }
    await observer.connect();
    // Both warm up (JIT) under the same load before anything is measured, as the three do below.
    progress(`ledger: warming the SQLite and the PostgreSQL process, ${CONNECTIONS} connections`);
    await phase('warm-up, not measured', 'sqlite', [sqlite], CONNECTIONS, PHASE_MS);
    await phase('warm-up, not measured', 'postgres', [postgres], CONNECTIONS, PHASE_MS);
    for (let round = 1; round <= ROUNDS; round++) {
      progress(`ledger round ${round}: SQLite, then PostgreSQL, ${CONNECTIONS} connections`);
      phases.push(await phase(`SQLite, 1 process (round ${round})`, 'sqlite', [sqlite], CONNECTIONS, PHASE_MS));
      phases.push(await phase(`PostgreSQL + Redis, 1 process (round ${round})`, 'postgres', [postgres], CONNECTIONS, PHASE_MS, observed));
    }
    progress('ledger: concurrency 1, direct / SQLite / PostgreSQL / PostgreSQL with holds in PostgreSQL alternating');
    // The same mode with its lease holds written to PostgreSQL before the provider call, not journaled in Redis.
    const unjournaled = await start('postgres', 9, { LEDGER_HOLD_JOURNAL: 'off' });
    const runs = await sequential([
      { name: 'direct', url: upstream.info.url },
      { name: 'SQLite', url: sqlite.info.url, key: sqlite.info.key },
      { name: 'PostgreSQL + Redis', url: postgres.info.url, key: postgres.info.key },
      { name: UNJOURNALED, url: unjournaled.info.url, key: unjournaled.info.key },
    ]);
    for (const [name, results] of runs) sequentialRuns.set(name, results);
    await stopChild(unjournaled.process);
    await stopChild(sqlite.process);
    if (!THREE) return report(phases, sequentialRuns);
    if (PIN) for (const pid of [postgres.process.pid!, process.pid]) pin(pid, allCores);
    const more = [postgres, await start('postgres', 1), await start('postgres', 2)];
    // The two new processes warm up (JIT) under the same load before anything is measured.
    progress(`ledger: three PostgreSQL processes on one account, ${CONNECTIONS} connections in all: warming the two new ones`);
    await phase('warm-up, not measured', 'three', more, CONNECTIONS, PHASE_MS);
    for (let round = 1; round <= ROUNDS; round++) {
      progress(`ledger round ${round}: three PostgreSQL processes on one account, then the first alone, ${CONNECTIONS} connections`);
      phases.push(await phase(`PostgreSQL + Redis, 3 processes (round ${round})`, 'three', more, CONNECTIONS, PHASE_MS, observed));
      phases.push(await phase(`PostgreSQL + Redis, 1 of them alone (round ${round})`, 'one', [postgres], CONNECTIONS, PHASE_MS, observed));
    }
  } finally {
    await Promise.allSettled(children.map((child) => stopChild(child.process)));
    await forgetJournal(observer, redisUrl).catch(() => undefined);
    await observer.end().catch(() => undefined);
    observed.redis.disconnect();
    await admin.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    await rm(directory, { recursive: true, force: true });
  }
  return report(phases, sequentialRuns);
}

function report(phases: Phase[], sequentialRuns: Map<string, LoadResult[]>): number {
  const lines: string[] = [
    '',
    `### Ledger at scale: embedded SQLite beside PostgreSQL + Redis (${CONNECTIONS} connections, ${PHASE_MS / 1000} s per phase)`,
    '',
    `${os.cpus().length} cores; load average ${os
      .loadavg()
      .map((load) => load.toFixed(1))
      .join(' / ')} (1 / 5 / 15 min) at the end of the run.` +
      (PIN ? ' Pinned (BENCH_LEDGER_PIN=1): the one-process gateways on core 1, the load generator on core 0, until the three-process phases.' : '') +
      (WRK ? ' Loaded phases sent by wrk (BENCH_LEDGER_LOAD=wrk), one process per gateway; p50 and p99 are the worst of those processes.' : ''),
    '',
  ];
  lines.push(
    '| Phase | Req/s | p50 (ms) | p99 (ms) | Gateway CPU/req (ms) | Per process (ms) | Load generator CPU/req (ms) | Machine busy (CPU/req, ms; each core, %) | DB backend CPU/req (ms) | DB transactions/req | DB rows written/req | Redis commands/req | Lock-wait samples (account row) | Mean waiters (account row) |',
  );
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of phases) {
    const latency = row.result.summary ?? percentiles(row.result.latencies);
    lines.push(
      `| ${row.name} | ${rate(row.result).toFixed(0)} | ${ms(latency.p50)} | ${ms(latency.p99)} | ${ms(row.cpuPerRequestMs)} | ` +
        `${row.cpuPerRequestByProcessMs.map((value) => ms(value)).join(' / ')} | ${ms(row.loadGeneratorCpuPerRequestMs)} | ` +
        `${(row.machineBusy * 100).toFixed(0)}% (${ms(row.machineCpuPerRequestMs)}; ${row.coreBusy.map((busy) => (busy * 100).toFixed(0)).join(' / ')}) | ` +
        `${row.database ? ms(row.database.backendCpuPerRequestMs) : '—'} | ` +
        `${row.database ? row.database.transactionsPerRequest.toFixed(3) : '—'} | ${row.database ? row.database.rowsWrittenPerRequest.toFixed(2) : '—'} | ` +
        `${row.database ? row.database.redisCommandsPerRequest.toFixed(2) : '—'} | ` +
        `${row.lockWaits ? `${row.lockWaits.samplesWithWaiter}/${row.lockWaits.samples} (${row.lockWaits.samplesWithAccountWaiter})` : '—'} | ` +
        `${row.lockWaits ? `${row.lockWaits.meanWaiters.toFixed(3)} (${row.lockWaits.meanAccountWaiters.toFixed(3)})` : '—'} |`,
    );
  }
  const sum = (kind: PhaseKind, pick: (row: Phase) => number) =>
    phases.filter((row) => row.kind === kind).reduce((total, row) => total + pick(row), 0);
  const sqliteRate = sum('sqlite', (row) => rate(row.result));
  const postgresRate = sum('postgres', (row) => rate(row.result));
  const sqliteCpu = sum('sqlite', (row) => row.cpuPerRequestMs!);
  const postgresCpu = sum('postgres', (row) => row.cpuPerRequestMs!);
  const threeWaits = phases
    .filter((row) => row.kind === 'three')
    .map((row) => row.lockWaits!)
    .reduce(
      (total, waits) => ({
        samples: total.samples + waits.samples,
        samplesWithWaiter: total.samplesWithWaiter + waits.samplesWithWaiter,
        samplesWithAccountWaiter: total.samplesWithAccountWaiter + waits.samplesWithAccountWaiter,
        meanWaiters: total.meanWaiters + waits.meanWaiters * waits.samples,
        meanAccountWaiters: total.meanAccountWaiters + waits.meanAccountWaiters * waits.samples,
      }),
      { samples: 0, samplesWithWaiter: 0, samplesWithAccountWaiter: 0, meanWaiters: 0, meanAccountWaiters: 0 },
    );
  threeWaits.meanWaiters /= Math.max(1, threeWaits.samples);
  threeWaits.meanAccountWaiters /= Math.max(1, threeWaits.samples);
  const p50 = (name: string) => percentiles(Float64Array.from((sequentialRuns.get(name) ?? []).flatMap((run) => [...run.latencies]))).p50;
  const addedSqlite = p50('SQLite') - p50('direct');
  const addedPostgres = p50('PostgreSQL + Redis') - p50('direct');
  const addedUnjournaled = p50(UNJOURNALED) - p50('direct');
  const verdict = (pass: boolean) => (pass ? 'PASS' : 'MISS');
  const throughputRatio = postgresRate / sqliteRate;
  const cpuRatio = postgresCpu / sqliteCpu;
  const scaleRatio = sum('three', (row) => rate(row.result)) / sum('one', (row) => rate(row.result));
  const scaleCpuRatio = sum('three', (row) => row.cpuPerRequestMs!) / sum('one', (row) => row.cpuPerRequestMs!);
  const scaleMachineRatio = sum('three', (row) => row.machineCpuPerRequestMs) / sum('one', (row) => row.machineCpuPerRequestMs);
  lines.push('');
  lines.push('| Ledger at scale | Measured | Target | Result |');
  lines.push('|---|---:|---:|---|');
  lines.push(`| PostgreSQL / SQLite throughput, 1 process | ${throughputRatio.toFixed(2)}x | ≥ 0.77x | ${verdict(throughputRatio >= 0.77)} |`);
  lines.push(`| PostgreSQL / SQLite gateway CPU per request | ${cpuRatio.toFixed(2)}x | ≤ 1.4x | ${verdict(cpuRatio <= 1.4)} |`);
  lines.push(
    `| Added latency p50 at concurrency 1, PostgreSQL (SQLite) | ${ms(addedPostgres)} (${ms(addedSqlite)}) ms | < 1.5 ms | ${verdict(addedPostgres < 1.5)} |`,
  );
  lines.push(`| Added latency p50 at concurrency 1, holds in PostgreSQL (LEDGER_HOLD_JOURNAL=off) | ${ms(addedUnjournaled)} ms | — | — |`);
  if (THREE) {
    lines.push(`| Three processes / one process, total throughput | ${scaleRatio.toFixed(2)}x | ≥ 1x | ${verdict(scaleRatio >= 1)} |`);
    lines.push(
      `| Three processes / one process, gateway CPU per request (machine CPU per request) | ${scaleCpuRatio.toFixed(2)}x (${scaleMachineRatio.toFixed(2)}x) | — | — |`,
    );
    lines.push(
      `| Lock waits of any kind, three processes | ${threeWaits.samplesWithWaiter}/${threeWaits.samples} (${threeWaits.meanWaiters.toFixed(3)}) | — | — |`,
    );
    lines.push(
      `| Lock waits on the account row, three processes: samples with a waiter (mean waiters) | ${threeWaits.samplesWithAccountWaiter}/${threeWaits.samples} (${threeWaits.meanAccountWaiters.toFixed(3)}) | near 0 | — |`,
    );
  }
  lines.push('');
  lines.push(
    `Ratios are of the ${ROUNDS} rounds summed, within this run. Three processes:` +
      ' the two added ones served one loaded phase, not measured, before their first round. ' +
      'Machine busy: every core, from /proc/stat (the load generator, the upstream, PostgreSQL and Redis share them with the gateways), then each core alone, core 0 first. ' +
      'DB transactions and rows per request: pg_stat_database of the bench database (every gateway process), divided by requests. ' +
      'Redis commands per request: INFO commandstats of the Redis server (every client; only the gateways use it during a phase), divided by requests; ' +
      "it counts the commands scripts run too: the rate limiter's EVALSHA runs TIME, HMGET, HSET and PEXPIRE, five in all per request. " +
      'Lock waits: gateway backends with wait_event_type Lock in pg_stat_activity, sampled every 20 ms.',
  );
  console.log(lines.join('\n'));
  const errors = phases.reduce((total, row) => total + row.result.errors, 0);
  if (errors > 0) {
    console.error(`bench: ${errors} ledger request(s) failed. First failures:`);
    for (const sample of phases.flatMap((row) => row.result.errorSamples).slice(0, 5)) console.error(`  ${sample}`);
  }
  return errors > 0 ? 1 : 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await ledgerScaleBench();
}
