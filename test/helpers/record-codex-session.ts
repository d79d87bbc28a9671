/**
 * Records the Responses request bodies the real Codex binary sends in a tool loop of many turns,
 * into test/fixtures/codex-tool-loop-session.json, for the prompt-caching replay
 * (test/prompt-caching-replay.test.ts). Codex runs `codex exec` in a small project against an
 * in-process gateway whose svc/balanced answers from the fake Anthropic provider, scripted to
 * call `exec_command` TURNS times (reading the project's files) and then to answer.
 *
 *   node --import tsx test/helpers/record-codex-session.ts && npx prettier --write test/fixtures/codex-tool-loop-session.json
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startHarness } from './gateway-harness.ts';

const TURNS = 22;
const bin = resolve('node_modules/.bin');
const directory = mkdtempSync(join(tmpdir(), 'codex-session-'));
const work = join(directory, 'project');
const codexHome = join(directory, 'codex');
mkdirSync(join(work, 'src'), { recursive: true });
mkdirSync(codexHome, { recursive: true });

// A small project with a bug to look for: the commands below read it.
const files: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'ledger-kit', type: 'module', scripts: { test: 'node --test' } }, null, 2),
  'README.md': '# ledger-kit\n\nSums and formats money in integer cents.\n',
  'src/sum.js': 'export function sum(values) {\n  return values.reduce((total, value) => total + value, 1);\n}\n',
  'src/format.js': 'export function format(cents) {\n  return `$${(cents / 100).toFixed(2)}`;\n}\n',
  'src/parse.js':
    "export function parse(text) {\n  const [dollars, cents = '0'] = text.replace('$', '').split('.');\n  return Number(dollars) * 100 + Number(cents.padEnd(2, '0'));\n}\n",
  'src/sum.test.js':
    "import { test } from 'node:test';\nimport assert from 'node:assert';\nimport { sum } from './sum.js';\ntest('sum', () => assert.equal(sum([1, 2]), 3));\n",
  'src/format.test.js':
    "import { test } from 'node:test';\nimport assert from 'node:assert';\nimport { format } from './format.js';\ntest('format', () => assert.equal(format(1234), '$12.34'));\n",
};
for (const [path, text] of Object.entries(files)) writeFileSync(join(work, path), text);
const commands = [
  'ls -la',
  'cat package.json',
  'cat README.md',
  'ls src',
  'cat src/sum.js',
  'cat src/sum.test.js',
  'cat src/format.js',
  'cat src/format.test.js',
  'cat src/parse.js',
  'wc -l src/*.js',
  'grep -n reduce src/*.js',
  'grep -rn "export function" src',
  'head -3 src/sum.js',
  'tail -2 src/format.js',
  'cat -n src/sum.js',
  'grep -c test src/*.test.js',
  'ls -1 src | sort',
  'cat src/parse.js | wc -c',
  'grep -n "1);" src/sum.js',
  'sed -n 2p src/sum.js',
  'cat src/sum.test.js src/format.test.js',
  'ls -la src',
];

const harness = await startHarness({ timeoutMs: 30_000 });
const replies = commands.slice(0, TURNS).map((command) => ({
  toolCalls: [{ name: 'exec_command', arguments: JSON.stringify({ cmd: command, workdir: work }) }],
}));
harness.fake.script('claude-x', ...replies, {
  text: 'sum() starts its reduce at 1 instead of 0, so every total is one too high: change the initial value to 0.',
});

const bodies: unknown[] = [];
const proxy = createServer((incoming, outgoing) => {
  const chunks: Buffer[] = [];
  incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
  incoming.on('end', () => {
    const body = Buffer.concat(chunks);
    if (incoming.url?.startsWith('/v1/responses') && body.length) bodies.push(JSON.parse(body.toString('utf8')));
    const forward = httpRequest(`${harness.gateway.url}${incoming.url}`, { method: incoming.method, headers: incoming.headers }, (answer) => {
      outgoing.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(outgoing);
    });
    forward.on('error', () => outgoing.destroy());
    forward.end(body);
  });
});
await new Promise<void>((ready) => proxy.listen(0, '127.0.0.1', ready));
const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

writeFileSync(
  join(codexHome, 'config.toml'),
  [
    'model = "svc/balanced"',
    'model_provider = "gateway"',
    'approval_policy = "never"',
    'sandbox_mode = "danger-full-access"',
    '',
    '[model_providers.gateway]',
    'name = "gateway"',
    `base_url = "${proxyUrl}/v1"`,
    'env_key = "GATEWAY_KEY"',
    'wire_api = "responses"',
    '',
  ].join('\n'),
);
const env = {
  PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`,
  HOME: directory,
  LANG: 'C.UTF-8',
  CODEX_HOME: codexHome,
  GATEWAY_KEY: harness.key,
};
const output = await new Promise<string>((done, fail) => {
  const child = spawn(join(bin, 'codex'), ['exec', '--skip-git-repo-check', 'Why does the test in src/sum.test.js fail? Look around first.'], {
    cwd: work,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout.on('data', (chunk) => (text += chunk));
  child.stderr.on('data', (chunk) => (text += chunk));
  child.once('close', (code) => (code === 0 ? done(text) : fail(new Error(`codex exited with ${code}\n${text}`))));
});
console.log(output.slice(-2_000));

// Each request repeats the one before it and adds the last turn: kept as the last request and the
// length of each one's input. The project's temporary path becomes a fixed one.
const last = bodies.at(-1) as { input: unknown[] };
const lengths = (bodies as Array<{ input: unknown[] }>).map((body) => body.input.length);
for (const body of bodies as Array<{ input: unknown[] }>) {
  const same = JSON.stringify({ ...body, input: body.input }) === JSON.stringify({ ...last, input: last.input.slice(0, body.input.length) });
  if (!same) throw new Error('a request is not a prefix of the last one: keep the bodies whole');
}
const fixture = {
  comment: `Responses bodies the real codex binary sent in one tool loop (test/helpers/record-codex-session.ts): request n is \`request\` with the first input_lengths[n] items of its input.`,
  input_lengths: lengths,
  request: last,
};
const text = JSON.stringify(fixture, null, 1).split(work).join('/home/dev/ledger-kit').split(directory).join('/home/dev');
writeFileSync(resolve('test/fixtures/codex-tool-loop-session.json'), `${text}\n`);
console.log(`recorded ${bodies.length} requests`);
proxy.close();
await harness.close();
rmSync(directory, { recursive: true, force: true });
