/**
 * `npm run bench:soak`: the gateway under mixed load for a long while, on PostgreSQL + Redis of
 * its own (a cluster made with initdb and a redis-server, on spare ports, as
 * test/dependency-outage.test.ts makes them). One compiled gateway process (as `npm start` runs
 * it) in front of the fake upstream, sent by SOAK_CONCURRENCY clients:
 *
 *   json        svc/fast, answered by up/alpha
 *   stream      svc/fast streamed (16 chunks, 5 ms apart)
 *   cancel      a stream whose client leaves after 20 ms
 *   fallback    up/alpha answers 500 (one request in five of those): up/beta answers instead
 *   failure     up/tiny answers 500: the client gets the retryable envelope
 *
 * It samples the gateway's RSS every SOAK_SAMPLE_SECONDS, and at the end checks that no hold is
 * left and that the receipts sum exactly to the balance's change. Prints a Markdown table and
 * writes the samples to bench/results/soak-rss.tsv and one row to bench/results/soak.tsv.
 * Exits 1 when a hold is left, the sums differ or a request got no answer.
 *
 * Environment: SOAK_SECONDS (600), SOAK_CONCURRENCY (8), SOAK_SAMPLE_SECONDS (10).
 */
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import pg from 'pg';
import { issueApiKey } from '../src/auth/issue-api-key.ts';
import { NANO_PER_USD } from '../src/lib/money.ts';
import { createPostgresStore } from '../src/storage/postgres/postgres-store.ts';
import { createRedisHoldJournal } from '../src/storage/postgres/redis-hold-journal.ts';
import { DEFAULT_ACCOUNT_ID } from '../src/storage/store.ts';
import { startFakeUpstream } from '../test/fake-upstream/fake-upstream.ts';
import { harnessConfigText } from '../test/helpers/gateway-harness.ts';
import { buildServer } from '../test/helpers/build-server.ts';
import { startOwnPostgres, startOwnRedis } from '../test/helpers/own-services.ts';
import { intEnv } from './int-env.ts';

const SECONDS = intEnv('SOAK_SECONDS', 600);
const CONCURRENCY = intEnv('SOAK_CONCURRENCY', 8);
const SAMPLE_SECONDS = intEnv('SOAK_SAMPLE_SECONDS', 10);
const FUNDS = 10_000 * NANO_PER_USD;
const KINDS = ['json', 'stream', 'cancel', 'fallback', 'failure'] as const;
type Kind = (typeof KINDS)[number];

function rssMib(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

const postgres = await startOwnPostgres();
const redis = await startOwnRedis();
const fake = await startFakeUpstream();
const directory = await mkdtemp(join(tmpdir(), 'soak-'));
const journalRedis = new Redis(redis.url);
const store = createPostgresStore(postgres.url);
try {
  const configPath = join(directory, 'gateway.yaml');
  await writeFile(
    configPath,
    harnessConfigText(fake.url, join(directory, 'unused.db'), 10_000).replace('server: {', 'logging: { requests: false }\nserver: {'),
  );
  await store.migrate();
  await store.addFunds(DEFAULT_ACCOUNT_ID, FUNDS, 'soak');
  const { key } = await issueApiKey(store, { name: 'soak', rateLimitPerMinute: 1_000_000 });
  // The compiled build, as `npm start` runs it.
  buildServer();
  const child = spawn(process.execPath, ['bin/gateway.js', 'start', '--config', configPath], {
    env: { ...process.env, DATABASE_URL: postgres.url, REDIS_URL: redis.url, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const match = /gateway listening on (http:\/\/[^/\s"]+)\/v1/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`gateway exited with ${code}:\n${output}`)));
  });
  // Its errors are counted, the first few shown; the rest of its log is read and dropped.
  child.stdout.removeAllListeners('data');
  let loggedErrors = 0;
  child.stdout.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) {
      if (!line.includes('"level":50')) continue;
      if (++loggedErrors <= 3) console.error(line.slice(0, 500));
    }
  });
  const gateway = { url };
  const pid = child.pid!;

  const counts = Object.fromEntries(KINDS.map((kind) => [kind, { sent: 0, served: 0, refused: 0, cancelled: 0, unanswered: 0 }])) as Record<
    Kind,
    { sent: number; served: number; refused: number; cancelled: number; unanswered: number }
  >;
  const send = async (kind: Kind): Promise<void> => {
    const count = counts[kind];
    count.sent++;
    const stream = kind === 'stream' || kind === 'cancel';
    const model = kind === 'failure' ? 'up/tiny' : 'svc/fast';
    if (kind === 'fallback') fake.script('alpha', { status: 500 });
    if (kind === 'failure') fake.script('tiny', { status: 500 });
    if (stream) fake.script('alpha', { text: 'soak '.repeat(32), chunkSize: 10, chunkDelayMs: 5 });
    const abort = new AbortController();
    if (kind === 'cancel') setTimeout(() => abort.abort(), 20);
    try {
      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, stream, max_tokens: 100, messages: [{ role: 'user', content: `soak ${kind}` }] }),
        signal: abort.signal,
      });
      const text = await response.text();
      // An error is the envelope, or in a stream its last event.
      const envelope = response.status === 200 ? /data: (\{"error".*)\n\n$/.exec(text)?.[1] : text;
      if (envelope === undefined) count.served++;
      else if ((JSON.parse(envelope) as { error?: { retryable?: boolean } }).error?.retryable) count.refused++;
      else {
        count.unanswered++;
        console.error(kind, response.status, envelope.slice(0, 200));
      }
    } catch (error) {
      if (kind === 'cancel' && abort.signal.aborted) count.cancelled++;
      else {
        count.unanswered++;
        console.error(kind, (error as Error).message);
      }
    }
  };

  const started = Date.now();
  const samples: Array<{ seconds: number; rssMib: number; requests: number }> = [];
  const total = () => KINDS.reduce((sum, kind) => sum + counts[kind].sent, 0);
  samples.push({ seconds: 0, rssMib: rssMib(pid), requests: 0 });
  let running = true;
  const sampler = (async () => {
    while (running) {
      await sleep(SAMPLE_SECONDS * 1000);
      // The fake keeps what it was sent: not this bench's memory to grow.
      fake.requests.length = 0;
      samples.push({ seconds: Math.round((Date.now() - started) / 1000), rssMib: rssMib(pid), requests: total() });
      const last = samples.at(-1)!;
      console.error(`${last.seconds} s: ${last.requests} requests, gateway RSS ${last.rssMib.toFixed(1)} MiB`);
    }
  })();
  const client = async (index: number) => {
    for (let round = index; Date.now() - started < SECONDS * 1000; round++) await send(KINDS[round % KINDS.length]!);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, index) => client(index)));
  running = false;
  await sampler;

  // Every request has ended on the client's side; a cancelled one may still be settling.
  store.useHoldJournal?.(createRedisHoldJournal(journalRedis));
  let holds = await store.listHolds(DEFAULT_ACCOUNT_ID);
  for (let waited = 0; holds.length > 0 && waited < 10_000; waited += 200) {
    await sleep(200);
    holds = await store.listHolds(DEFAULT_ACCOUNT_ID);
  }
  const sql = new pg.Client({ connectionString: postgres.url });
  await sql.connect();
  const { rows } = await sql.query<{ receipts: string; cost: string }>(
    'SELECT count(*) AS receipts, coalesce(sum(cost_nano), 0) AS cost FROM receipts',
  );
  await sql.end();
  const balance = await store.getBalance(DEFAULT_ACCOUNT_ID);
  const receiptsCost = Number(rows[0]!.cost);
  const unanswered = KINDS.reduce((sum, kind) => sum + counts[kind].unanswered, 0);
  child.kill('SIGTERM');
  await exited;

  const rss = samples.map((sample) => sample.rssMib);
  const afterWarmUp = samples.filter((sample) => sample.seconds >= Math.min(60, SECONDS / 5)).map((sample) => sample.rssMib);
  const settings = `${SECONDS} s, ${CONCURRENCY} clients, kinds in turn: ${KINDS.join(', ')}`;
  const lines = [
    `Soak: ${settings}; PostgreSQL + Redis, one compiled gateway process`,
    '',
    '| Figure | Value |',
    '|---|---|',
    `| Requests | ${total()} (${KINDS.map((kind) => `${kind} ${counts[kind].sent}`).join(', ')}) |`,
    `| Served / told to retry / cancelled by the client / no answer | ${KINDS.reduce((sum, kind) => sum + counts[kind].served, 0)} / ${KINDS.reduce((sum, kind) => sum + counts[kind].refused, 0)} / ${KINDS.reduce((sum, kind) => sum + counts[kind].cancelled, 0)} / ${unanswered} |`,
    `| Gateway RSS at start, min, max, end (MiB) | ${rss[0]!.toFixed(1)}, ${Math.min(...rss).toFixed(1)}, ${Math.max(...rss).toFixed(1)}, ${rss.at(-1)!.toFixed(1)} |`,
    `| RSS range after the first ${Math.min(60, SECONDS / 5)} s (MiB) | ${Math.min(...afterWarmUp).toFixed(1)} to ${Math.max(...afterWarmUp).toFixed(1)} |`,
    `| Holds left | ${holds.length} |`,
    `| Errors in the gateway's log | ${loggedErrors} |`,
    `| Receipts, their cost sum, the balance change (nano-USD) | ${rows[0]!.receipts}, ${receiptsCost}, ${FUNDS - balance} |`,
  ];
  console.log(lines.join('\n'));

  const commit = (() => {
    try {
      return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    } catch {
      return '-';
    }
  })();
  const rssFile = join('bench', 'results', 'soak-rss.tsv');
  if (!existsSync(rssFile)) writeFileSync(rssFile, 'commit\tseconds\trss_mib\trequests\n');
  for (const sample of samples) appendFileSync(rssFile, `${commit}\t${sample.seconds}\t${sample.rssMib.toFixed(1)}\t${sample.requests}\n`);
  const runFile = join('bench', 'results', 'soak.tsv');
  if (!existsSync(runFile))
    writeFileSync(
      runFile,
      'commit\tseconds\tconcurrency\trequests\tserved\tretryable\tcancelled\tunanswered\trss_start_mib\trss_min_mib\trss_max_mib\trss_end_mib\trss_after_warmup_min_mib\trss_after_warmup_max_mib\tholds_left\treceipts\treceipts_cost_nano\tbalance_change_nano\n',
    );
  const sum = (field: 'served' | 'refused' | 'cancelled') => KINDS.reduce((total, kind) => total + counts[kind][field], 0);
  appendFileSync(
    runFile,
    [
      commit,
      SECONDS,
      CONCURRENCY,
      total(),
      sum('served'),
      sum('refused'),
      sum('cancelled'),
      unanswered,
      rss[0]!.toFixed(1),
      Math.min(...rss).toFixed(1),
      Math.max(...rss).toFixed(1),
      rss.at(-1)!.toFixed(1),
      Math.min(...afterWarmUp).toFixed(1),
      Math.max(...afterWarmUp).toFixed(1),
      holds.length,
      rows[0]!.receipts,
      receiptsCost,
      FUNDS - balance,
    ].join('\t') + '\n',
  );
  if (holds.length > 0 || receiptsCost !== FUNDS - balance || unanswered > 0) process.exitCode = 1;
} finally {
  journalRedis.disconnect();
  await store.close();
  await fake.close();
  await postgres.close();
  await redis.close();
  await rm(directory, { recursive: true, force: true });
}
