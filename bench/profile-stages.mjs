/**
 * Where a gateway's CPU goes, per stage of a request, from a V8 CPU profile of the compiled build
 * (`node --cpu-prof bin/gateway.js start`, loaded by bench-peers or wrk, stopped with SIGINT):
 *
 *   node bench/profile-stages.mjs <file.cpuprofile> [--by=stage|file|function] [--top=N] [--skip=SECONDS]
 *
 * `--skip` leaves out the first seconds of the profile (the start, the load's warm-up).
 * Each sample goes to the innermost frame that is the gateway's own code (mapped back to its
 * source file through dist/server's source maps) or a package it calls; what Node runs on its own
 * (the HTTP parser, socket reads, timers) goes by the Node module it is in; garbage collection
 * and the runtime are their own rows; idle time is left out. Stages are folders of src/.
 */
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const file = args.find((arg) => !arg.startsWith('--'));
if (!file) {
  console.error('usage: node bench/profile-stages.mjs <file.cpuprofile> [--by=stage|file|function] [--top=N]');
  process.exit(2);
}
const by = args.find((arg) => arg.startsWith('--by='))?.slice(5) ?? 'stage';
const top = Number(args.find((arg) => arg.startsWith('--top='))?.slice(6) ?? 25);
const skipUs = 1e6 * Number(args.find((arg) => arg.startsWith('--skip='))?.slice(7) ?? 0);

/** src/ folders (and files) to the stage they serve, first match wins. */
const STAGES = [
  [/^src\/http\/body\//, 'reading and parsing the body'],
  [/^src\/auth\//, 'key authentication'],
  [/^src\/limits\//, 'rate limits'],
  [/^src\/http\/chat\/(chat-stream|sse-writer)/, 'writing the answer (stream)'],
  [/^src\/http\//, 'routes, lifecycle, errors'],
  [/^src\/formats\//, 'wire formats (parse, validate, encode, relay)'],
  [/^src\/tokens\//, 'counting the prompt'],
  [/^src\/(billing|routing|catalog)\//, 'routing, holds and settlement'],
  [/^src\/storage\//, 'storage'],
  [/^src\/providers\/|^src\/lib\/json-pieces/, 'the upstream call'],
  [/^src\/(metrics|cache)\//, 'metrics, logs, caches'],
  [/^src\//, 'other gateway code'],
];
const PACKAGES = {
  fastify: 'HTTP framework (Fastify)',
  'find-my-way': 'HTTP framework (Fastify)',
  'light-my-request': 'HTTP framework (Fastify)',
  avvio: 'HTTP framework (Fastify)',
  'fast-json-stringify': 'HTTP framework (Fastify)',
  ajv: 'wire formats (parse, validate, encode, relay)',
  'better-sqlite3': 'storage',
  pg: 'storage',
  ioredis: 'storage',
  pino: 'metrics, logs, caches',
  'prom-client': 'metrics, logs, caches',
};
const NODE_MODULES = [
  [/_http_server|_http_incoming|_http_common|_http_outgoing/, 'Node HTTP server'],
  [/_http_client|_http_agent/, 'the upstream call'],
  [/net|stream|tcp|dns|timers|task_queues|events/, 'Node sockets, streams, timers'],
];

const maps = new Map();
/** The source of a bundle frame (`src/...`), through the bundle's source map; undefined when it has none. */
function sourceOf(url, line, column) {
  if (!url.startsWith('file://') || !url.includes('/dist/')) return undefined;
  let map = maps.get(url);
  if (map === undefined) {
    try {
      const path = fileURLToPath(url);
      map = new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')));
    } catch {
      map = null;
    }
    maps.set(url, map);
  }
  if (!map) return undefined;
  const entry = map.findEntry(line, column);
  const source = entry?.originalSource;
  if (!source) return undefined;
  const at = source.lastIndexOf('src/');
  return at === -1 ? source : source.slice(at);
}

const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parents = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);

const selfTime = new Map();
let at = profile.startTime;
for (let index = 0; index < profile.samples.length; index++) {
  const id = profile.samples[index];
  at += profile.timeDeltas[index] ?? 0;
  if (at - profile.startTime < skipUs) continue;
  selfTime.set(id, (selfTime.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
}

function rowOf(id) {
  const leaf = nodes.get(id).callFrame;
  if (leaf.functionName === '(idle)') return null;
  if (leaf.functionName === '(garbage collector)') return { stage: 'garbage collection', file: 'gc', fn: 'gc' };
  if (leaf.functionName === '(program)') return { stage: 'V8 and the runtime', file: 'program', fn: 'program' };
  let nodeModule;
  for (let current = id; current !== undefined; current = parents.get(current)) {
    const frame = nodes.get(current).callFrame;
    const source = sourceOf(frame.url, frame.lineNumber, frame.columnNumber);
    if (source?.startsWith('src/')) {
      const stage = STAGES.find(([pattern]) => pattern.test(source))[1];
      return { stage, file: source, fn: `${frame.functionName || '(anonymous)'} ${source}` };
    }
    const pkg = frame.url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1];
    if (pkg) return { stage: PACKAGES[pkg] ?? `package ${pkg}`, file: pkg, fn: `${frame.functionName || '(anonymous)'} ${pkg}` };
    if (nodeModule === undefined && frame.url.startsWith('node:')) nodeModule = frame.url;
  }
  const name = nodeModule ?? leaf.url ?? leaf.functionName;
  const stage = NODE_MODULES.find(([pattern]) => pattern.test(name))?.[1] ?? 'Node, other';
  return { stage, file: name || leaf.functionName, fn: `${leaf.functionName || '(anonymous)'} ${name}` };
}

const totals = new Map();
let busy = 0;
for (const [id, time] of selfTime) {
  const row = rowOf(id);
  if (!row) continue;
  busy += time;
  const key = by === 'file' ? row.file : by === 'function' ? row.fn : row.stage;
  totals.set(key, (totals.get(key) ?? 0) + time);
}
console.log(`busy ${(busy / 1000).toFixed(0)} ms of ${((profile.endTime - profile.startTime - skipUs) / 1000).toFixed(0)} ms profiled`);
console.log(`| ${by} | share of busy CPU |\n|---|---:|`);
for (const [key, time] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`| ${key} | ${((100 * time) / busy).toFixed(1)}% |`);
