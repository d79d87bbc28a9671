import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { catalogSnapshot } from '../src/catalog/catalog-data.ts';
import { demoConfigText } from '../src/config/demo-config.ts';
import { countTextTokens } from '../src/tokens/text-token-count.ts';
import { packRanks } from '../src/tokens/packed-ranks.mjs';
import { buildServer } from './helpers/build-server.ts';
import { startGatewayProcess } from './helpers/gateway-process.ts';

test('the compiled build loads no TypeScript compiler or loader, and bin/gateway.js runs it', async () => {
  buildServer();
  const directory = join('dist', 'server');
  const files = readdirSync(directory).filter((name) => name.endsWith('.js'));
  assert.ok(files.includes('main.js'));
  const imported = new Set<string>();
  for (const name of files) {
    const text = readFileSync(join(directory, name), 'utf8');
    for (const match of text.matchAll(/(?:from\s*|import\s*\(\s*)["']([^"']+)["']/g)) imported.add(match[1]!);
  }
  const packages = [...imported].filter((specifier) => !specifier.startsWith('.') && !specifier.startsWith('node:'));
  assert.deepEqual(
    // esbuild stays: fix agents check the syntax of the code they edit with it (fix/edits/check-syntax.ts).
    packages.filter((name) => /^(tsx|typescript)(\/|$)/.test(name)),
    [],
    'no compiler or loader is imported',
  );
  assert.deepEqual(
    [...imported].filter((specifier) => specifier.endsWith('.ts')),
    [],
    'no TypeScript source is imported',
  );
  // The counting thread reads gpt-tokenizer's cl100k and o200k ranks, packed, from JSON the build wrote beside it.
  const { default: ranks } = await import('gpt-tokenizer/esm/bpeRanks/cl100k_base');
  assert.deepEqual(JSON.parse(readFileSync(join(directory, 'cl100k-ranks.json'), 'utf8')), packRanks(ranks));
  const { default: o200kRanks } = await import('gpt-tokenizer/esm/bpeRanks/o200k_base');
  assert.deepEqual(JSON.parse(readFileSync(join(directory, 'o200k-ranks.json'), 'utf8')), packRanks(o200kRanks));
  // The price catalog's providers as JSON, which the bundle reads instead of the package's module.
  assert.deepEqual(JSON.parse(readFileSync(join(directory, 'catalog-data.json'), 'utf8')), catalogSnapshot());
  assert.ok(!packages.includes('@pydantic/genai-prices'), 'the compiled build never imports the catalog package');
  const models = spawnSync(process.execPath, ['bin/gateway.js', 'models', '--config', 'config/examples/mixed.yaml', '--json'], { encoding: 'utf8' });
  const fromSources = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'models', '--config', 'config/examples/mixed.yaml', '--json'],
    { encoding: 'utf8' },
  );
  assert.equal(models.status, 0, models.stderr);
  assert.equal(models.stdout, fromSources.stdout, 'the same prices from the JSON as from the package');
  const help = spawnSync(process.execPath, ['bin/gateway.js', '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /Usage: gateway <command>/);
});

test('the compiled gateway counts tokens on its counting thread, and parses a large body on its body thread, as the sources do', async () => {
  buildServer();
  const directory = await mkdtemp(join(tmpdir(), 'compiled-count-'));
  const configPath = join(directory, 'gateway.yaml');
  await writeFile(configPath, demoConfigText.replace('port: 8787', 'port: 0').replace('./data/gateway.db', join(directory, 'gateway.db')));
  const created = spawnSync(process.execPath, ['bin/gateway.js', 'keys', 'create', '--name', 'count', '--json', '--config', configPath], {
    encoding: 'utf8',
  });
  assert.equal(created.status, 0, created.stderr);
  const { key } = JSON.parse(created.stdout);
  const gateway = await startGatewayProcess(configPath, {}, { compiled: true });
  try {
    const count = async (content: string) => {
      const response = await fetch(`${gateway.url}/v1/messages/count_tokens`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'svc/fast', messages: [{ role: 'user', content }] }),
      });
      assert.equal(response.status, 200, await response.clone().text());
      return ((await response.json()) as { input_tokens: number }).input_tokens;
    };
    const content = 'Count me on the thread, please. '.repeat(50);
    const counted = await count(content);
    // The same count the sources make: the text's cl100k tokens plus the same framing.
    const framing = counted - (await countTextTokens(content));
    assert.ok(framing > 0 && framing < 20, `counted ${counted}`);
    assert.ok(counted < Buffer.byteLength(content) / 2, 'counted, not bounded by bytes');
    // Over a megabyte: the body is parsed on the body thread, its prompt handed back whole.
    const large = content + ' '.repeat(1_100_000) + content;
    assert.equal(await count(large), framing + (await countTextTokens(large)));
  } finally {
    await gateway.stop();
    await rm(directory, { recursive: true, force: true });
  }
});

test('`npm start` runs the build npm ci left, rebuilding nothing, and SIGTERM sent to npm stops the gateway', async () => {
  buildServer();
  const directory = await mkdtemp(join(tmpdir(), 'npm-start-'));
  const configPath = join(directory, 'gateway.yaml');
  await writeFile(configPath, demoConfigText.replace('port: 8787', 'port: 0').replace('./data/gateway.db', join(directory, 'gateway.db')));
  const built = statSync(join('dist', 'server', 'main.js')).mtimeMs;
  const npm = await startGatewayProcess(configPath, {}, { npmStart: true });
  try {
    const pid = Number(/"pid":(\d+)/.exec(npm.output())![1]);
    assert.notEqual(pid, npm.child.pid, 'the gateway runs under npm');
    assert.equal((await fetch(`${npm.url}/health`)).status, 200);
    assert.equal(statSync(join('dist', 'server', 'main.js')).mtimeMs, built, 'the build was not remade');
    const exit = await npm.stop('SIGTERM');
    assert.equal(exit.code, 0, npm.output());
    assert.match(npm.output(), /"msg":"shut down"/);
    assert.throws(() => process.kill(pid, 0), /ESRCH/, 'the gateway process is gone');
  } finally {
    await npm.stop('SIGKILL');
    await rm(directory, { recursive: true, force: true });
  }
});

test('bin/gateway.js without a build says so and how to make it', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'no-build-'));
  try {
    await mkdir(join(directory, 'bin'));
    await copyFile(join('bin', 'gateway.js'), join(directory, 'bin', 'gateway.js'));
    const run = spawnSync(process.execPath, [join(directory, 'bin', 'gateway.js'), 'start'], { encoding: 'utf8' });
    assert.equal(run.status, 1);
    assert.match(run.stderr, /no compiled build at .*dist\/server\/main\.js; run `npm run build` \(npm ci does it\)/);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
});
