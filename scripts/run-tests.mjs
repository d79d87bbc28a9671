// The test runner of `npm test` and `npm run test:unit`: every *.test.ts file under the given
// folders (default src and test; src alone with --unit) in its own `node --test` process, several
// at once, the longest first (the durations of the last run, kept in .tmp/test-durations.json).
// Each file's output is printed whole when it ends, so parallel files never interleave; at the
// end come the failures, the slowest files and the totals.
//
//   node scripts/run-tests.mjs [--unit] [--concurrency=N] [--reporter=spec|dot] [--timeout=SECONDS] [--slowest=N] [paths...]
//
// What keeps parallel files apart: each file is its own process, listens on port 0 and writes to
// its own temporary directories (the tests do that themselves); its PostgreSQL schemas have random
// names (test/helpers/postgres-test-connection.ts); every Redis key it and its gateways write lies
// under its own key prefix, TEST_NAMESPACE (test/helpers/redis-test-connection.ts), which this
// runner sweeps at the end. The server build (dist/server) is made once here, before any file
// starts (TEST_SERVER_BUILT=1): a file rebuilding it would empty it under another's gateways.
// --unit sets TEST_SERVICES=none: the suites that need PostgreSQL or Redis skip.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const countsReporter = join(root, 'scripts', 'test-counts-reporter.mjs');
const durationsFile = join(root, '.tmp', 'test-durations.json');

const options = { unit: false, concurrency: 0, reporter: 'spec', timeout: 600, slowest: 10, paths: [] };
for (const arg of process.argv.slice(2)) {
  const [name, value] = arg.split(/=(.*)/s, 2);
  if (name === '--unit') options.unit = true;
  else if (name === '--concurrency') options.concurrency = Number(value);
  else if (name === '--reporter') options.reporter = value;
  else if (name === '--timeout') options.timeout = Number(value);
  else if (name === '--slowest') options.slowest = Number(value);
  else if (name.startsWith('--')) usage(`unknown option ${arg}`);
  else options.paths.push(arg);
}
if (!['spec', 'dot'].includes(options.reporter)) usage(`--reporter must be spec or dot, not ${options.reporter}`);
if (!(options.timeout > 0)) usage('--timeout must be a positive number of seconds');
// Most files wait (on sockets, child processes, timers) more than they compute: more files than
// cores keep both cores busy. TEST_CONCURRENCY overrides it without editing a script.
const concurrency = options.concurrency || Number(process.env.TEST_CONCURRENCY) || Math.max(2, availableParallelism() * 2);
if (!Number.isInteger(concurrency) || concurrency < 1) usage(`concurrency must be a whole number, not ${concurrency}`);

function usage(problem) {
  console.error(
    `${problem}\nusage: node scripts/run-tests.mjs [--unit] [--concurrency=N] [--reporter=spec|dot] [--timeout=SECONDS] [--slowest=N] [paths...]`,
  );
  process.exit(2);
}

/** Every *.test.ts under `path` (or `path` itself), as paths relative to the checkout, sorted. */
function testFiles(path) {
  const full = resolve(root, path);
  if (full.endsWith('.test.ts')) return [relative(root, full)];
  const found = [];
  for (const entry of readdirSync(full, { withFileTypes: true, recursive: true })) {
    const file = join(entry.parentPath ?? entry.path, entry.name);
    if (entry.isFile() && entry.name.endsWith('.test.ts') && !file.includes(`${join('node_modules', '')}`)) found.push(relative(root, file));
  }
  return found;
}

const files = [...new Set((options.paths.length ? options.paths : options.unit ? ['src'] : ['src', 'test']).flatMap(testFiles))].sort();
if (files.length === 0) usage('no *.test.ts file found');

// The longest first, so that no long file starts last and runs alone. A file not timed before is
// taken for a long one: it starts early rather than late.
let previous = {};
try {
  previous = JSON.parse(readFileSync(durationsFile, 'utf8'));
} catch {}
const guess = (file) => previous[file] ?? (file.startsWith('test') ? 60_000 : 10_000);
const queue = [...files].sort((a, b) => guess(b) - guess(a));

const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
const namespaceRoot = `gwtest:${runId}`;
const env = { ...process.env, TEST_SERVER_BUILT: '1' };
if (options.unit) env.TEST_SERVICES = 'none';
if (process.stdout.isTTY && env.FORCE_COLOR === undefined && env.NO_COLOR === undefined) env.FORCE_COLOR = '1';
const green = (text) => (env.FORCE_COLOR && env.FORCE_COLOR !== '0' ? `\x1b[32m${text}\x1b[39m` : text);
const red = (text) => (env.FORCE_COLOR && env.FORCE_COLOR !== '0' ? `\x1b[31m${text}\x1b[39m` : text);

const build = spawnSync(process.execPath, [join(root, 'scripts', 'build-server.mjs')], { cwd: root, encoding: 'utf8' });
if (build.status !== 0) {
  console.error(`server build failed:\n${build.stdout}${build.stderr}`);
  process.exit(1);
}

const redisBefore = options.unit ? null : await redisKeysOutsideTests();
const countsDirectory = mkdtempSync(join(tmpdir(), 'run-tests-'));
const started = Date.now();
const results = [];
const running = new Set();
let interrupted = false;

console.log(`${files.length} test files, ${concurrency} at a time${options.unit ? ' (unit run: PostgreSQL and Redis suites skip)' : ''}\n`);

function runFile(file, index) {
  return new Promise((resolveRun) => {
    const countsPath = join(countsDirectory, `${index}.json`);
    const args = ['--import', 'tsx', '--test', `--test-reporter=${options.reporter}`, '--test-reporter-destination=stdout'];
    args.push(`--test-reporter=${countsReporter}`, `--test-reporter-destination=${countsPath}`, file);
    const fileStarted = Date.now();
    // Its own process group, so that a file past its time is ended with all it started.
    const child = spawn(process.execPath, args, {
      cwd: root,
      env: { ...env, TEST_NAMESPACE: `${namespaceRoot}:${index}` },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    running.add(child);
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, options.timeout * 1000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      let report = { counts: {}, failures: [] };
      try {
        report = JSON.parse(readFileSync(countsPath, 'utf8'));
      } catch {}
      const failed = code !== 0 || timedOut;
      if (timedOut) report.failures.push({ name: '(the whole file)', message: `still running after ${options.timeout} s: ended` });
      else if (failed && report.failures.length === 0) report.failures.push({ name: '(the whole file)', message: `exited with ${signal ?? code}` });
      resolveRun({ file, ms: Date.now() - fileStarted, failed, output, ...report });
    });
  });
}

function killGroup(child) {
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {}
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    interrupted = true;
    for (const child of running) killGroup(child);
    process.exitCode = 130;
  });
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

function print(result) {
  const mark = result.failed ? red('✖') : green('✔');
  console.log(`${mark} ${result.file} (${seconds(result.ms)})`);
  if (options.reporter === 'spec' || result.failed) console.log(`${result.output.trimEnd()}\n`);
}

let next = 0;
await Promise.all(
  Array.from({ length: Math.min(concurrency, queue.length) }, async () => {
    while (next < queue.length && !interrupted) {
      const file = queue[next];
      const result = await runFile(file, (next += 1));
      results.push(result);
      print(result);
    }
  }),
);
rmSync(countsDirectory, { recursive: true, force: true });
const wallMs = Date.now() - started;

if (!options.unit) await sweepRedis(redisBefore);

const durations = { ...previous };
for (const result of results) durations[result.file] = result.ms;
mkdirSync(dirname(durationsFile), { recursive: true });
writeFileSync(durationsFile, `${JSON.stringify(Object.fromEntries(Object.entries(durations).sort()), null, 2)}\n`);

const failed = results.filter((result) => result.failed);
if (failed.length > 0) {
  console.log(red(`\n${failed.length} file${failed.length === 1 ? '' : 's'} failed:`));
  for (const result of failed) {
    console.log(`  ${result.file}`);
    for (const failure of result.failures) console.log(`    ✖ ${failure.name}: ${failure.message}`);
  }
}

console.log(`\nslowest ${Math.min(options.slowest, results.length)} files:`);
for (const result of [...results].sort((a, b) => b.ms - a.ms).slice(0, options.slowest)) {
  console.log(`  ${seconds(result.ms).padStart(8)}  ${result.file}`);
}

const total = (name) => results.reduce((sum, result) => sum + (result.counts[name] ?? 0), 0);
console.log('');
for (const name of ['tests', 'suites', 'pass', 'fail', 'cancelled', 'skipped', 'todo']) console.log(`ℹ ${name} ${total(name)}`);
console.log(`ℹ files ${results.length} (${failed.length} failed${interrupted ? `, ${files.length - results.length} not run: interrupted` : ''})`);
console.log(`ℹ duration_ms ${wallMs}`);
// The plain closing line: `N passed, N failed, N skipped`.
// A file that failed without a failed test (it crashed, or ran past its time) counts as one.
const failures = total('fail') + total('cancelled') + failed.filter((result) => !(result.counts.fail > 0 || result.counts.cancelled > 0)).length;
console.log(`tests: ${total('pass')} passed, ${failures} failed, ${total('skipped') + total('todo')} skipped`);
if (failed.length > 0 || interrupted) process.exitCode = interrupted ? 130 : 1;

// --- Redis: what the run's files left under their prefixes, and any key written outside them ---

async function redisClient() {
  if (process.env.TEST_SERVICES === 'none') return null;
  const { Redis } = await import('ioredis');
  const url = new URL(process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379');
  url.searchParams.delete('keyPrefix');
  const redis = new Redis(url.href, {
    lazyConnect: true,
    connectTimeout: 2000,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return redis;
  } catch {
    if (redis.status !== 'end') redis.disconnect();
    return null;
  }
}

async function scanKeys(redis, pattern, limit = 100_000) {
  const keys = [];
  let cursor = '0';
  do {
    const [nextCursor, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    keys.push(...found);
    cursor = nextCursor;
  } while (cursor !== '0' && keys.length < limit);
  return keys;
}

/** The keys of the test database that lie under no test prefix (null without Redis). */
async function redisKeysOutsideTests() {
  const redis = await redisClient();
  if (redis === null) return null;
  try {
    return new Set((await scanKeys(redis, '*')).filter((key) => !key.startsWith('gwtest:')));
  } finally {
    redis.disconnect();
  }
}

/** Delete what this run's files left under their prefixes; warn of keys a file wrote outside its prefix. */
async function sweepRedis(before) {
  const redis = await redisClient();
  if (redis === null) return;
  try {
    const left = await scanKeys(redis, `${namespaceRoot}:*`);
    for (let start = 0; start < left.length; start += 500) await redis.unlink(...left.slice(start, start + 500));
    if (before === null) return;
    const outside = (await scanKeys(redis, '*')).filter((key) => !key.startsWith('gwtest:') && !before.has(key));
    if (outside.length > 0) {
      console.log(red(`\nRedis keys written outside the test prefixes (a client not given REDIS_TEST_URL?): ${outside.slice(0, 10).join(', ')}`));
    }
  } finally {
    redis.disconnect();
  }
}
