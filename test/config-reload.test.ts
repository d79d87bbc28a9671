import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { issueApiKey } from '../src/auth/issue-api-key.ts';
import { NANO_PER_USD } from '../src/lib/money.ts';
import { createSqliteStore } from '../src/storage/sqlite/sqlite-store.ts';
import { DEFAULT_ACCOUNT_ID } from '../src/storage/store.ts';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream/fake-upstream.ts';
import { harnessConfigText } from './helpers/gateway-harness.ts';
import { startGatewayProcess, type GatewayProcess } from './helpers/gateway-process.ts';

/** `gateway <args>` from the sources, to its end. */
function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function waitForLog(gateway: GatewayProcess, pattern: RegExp, from = 0): Promise<string> {
  for (let waited = 0; waited < 10_000; waited += 20) {
    const line = gateway
      .output()
      .slice(from)
      .split('\n')
      .find((text) => pattern.test(text));
    if (line) return line;
    await sleep(20);
  }
  assert.fail(`no log line ${pattern}:\n${gateway.output().slice(from)}`);
}

describe('SIGHUP and `gateway reload`: the config is swapped at once, requests in flight finish on the old one', () => {
  let fake: FakeUpstream;
  let directory: string;
  let configPath: string;
  let key: string;
  let gateway: GatewayProcess;
  let v1: string;
  const port = () => new URL(gateway.url).port;

  before(async () => {
    fake = await startFakeUpstream();
    directory = await mkdtemp(join(tmpdir(), 'config-reload-'));
    configPath = join(directory, 'gateway.yaml');
    const databasePath = join(directory, 'gateway.db');
    v1 = harnessConfigText(fake.url, databasePath, 30_000);
    await writeFile(configPath, v1);
    const store = createSqliteStore(databasePath);
    await store.migrate();
    await store.addFunds(DEFAULT_ACCOUNT_ID, 10 * NANO_PER_USD, 'test');
    key = (await issueApiKey(store, { name: 'reload' })).key;
    await store.close();
    gateway = await startGatewayProcess(configPath);
  });
  after(async () => {
    await gateway?.stop('SIGKILL');
    await fake?.close();
    await rm(directory, { recursive: true, force: true });
  });

  const ask = (model: string) =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 20 }),
    });

  test('providers, models, aliases and limits change together; the request in flight ends on the model it began with', async () => {
    assert.ok(existsSync(join(directory, `gateway-${port()}.pid`)), 'the pid file is beside the database');
    let open = () => {};
    fake.script('alpha', { text: 'old config', until: new Promise<void>((resolve) => (open = resolve)) });
    const inFlight = ask('svc/fast');
    while (fake.requests.length === 0) await sleep(10);

    // up/alpha gone, svc/fast on up/beta alone, a new model, and a default rate limit of 3 a minute.
    const v2 = v1
      .replace('svc/fast: { candidates: [up/alpha, up/beta], reasoning: low }', 'svc/fast: { candidates: [up/beta], reasoning: low }')
      .replace(
        'svc/balanced: { candidates: [anth/claude, up/alpha], reasoning: medium }',
        'svc/balanced: { candidates: [anth/claude], reasoning: medium }',
      )
      .replace(
        / {2}- id: up\/alpha\n(?: {4}.*\n)+/,
        '  - id: up/gamma\n    provider: up\n    upstream: gamma\n    price: { input: "1.00", output: "2.00" }\n',
      )
      .replace('server: {', 'limits: { default_rate_limit_per_minute: 3 }\nserver: {')
      // Read only at start: kept, and said so.
      .replace('port: 0 }', 'port: 0, drain_ms: 1234 }');
    assert.notEqual(v2, v1);
    await writeFile(configPath, v2);
    const reloaded = await cli(['reload', '--config', configPath, '--port', port()]);
    assert.equal(reloaded.code, 0, reloaded.stderr);
    assert.match(reloaded.stdout, new RegExp(`Gateway pid ${gateway.child.pid} on port ${port()} reloaded its config`));
    assert.match(reloaded.stdout, /Changed but kept until a restart: server\./);
    await waitForLog(gateway, /"msg":"config reloaded"/);

    open();
    const old = await inFlight;
    assert.equal(old.status, 200, 'the request in flight finished on the old config');
    assert.equal(old.headers.get('x-svc-model'), 'up/alpha');

    const next = await ask('svc/fast');
    assert.equal(next.headers.get('x-svc-model'), 'up/beta', 'a new request routes by the new aliases');
    assert.equal((await ask('up/gamma')).headers.get('x-svc-model'), 'up/gamma', 'a model the new config adds');
    const gone = await ask('up/alpha');
    assert.equal(gone.status, 400, 'a model the new config removed');
    assert.equal(((await gone.json()) as { error: { code: string } }).error.code, 'unsupported_model');
    const limited = await ask('up/beta');
    assert.equal(limited.status, 429, 'the new default rate limit: 3 a minute, 4 asked since the reload');
  });

  test('a file that does not load is refused with the reason logged; the running config stays', async () => {
    await writeFile(configPath, `${v1}\nnot_a_setting: true\n`);
    const from = gateway.output().length;
    gateway.child.kill('SIGHUP');
    const refused = await waitForLog(gateway, /config reload refused/, from);
    assert.match(JSON.parse(refused).reason, /not_a_setting/);
    assert.equal(gateway.child.exitCode, null, 'SIGHUP does not stop the gateway');
    assert.equal((await ask('up/gamma')).status, 429, 'still the config before: its models and its rate limit');

    // `gateway reload` says so too: here the file reads, but the gateway cannot serve it (its only provider's key variable is unset).
    await writeFile(configPath, v1.replace(/api_key: sk-upstream-openai-SECRET/, 'api_key: "${RELOAD_TEST_UNSET_KEY}"'));
    const outcome = await cli(['reload', '--config', configPath, '--port', port()], { RELOAD_TEST_UNSET_KEY: 'set-here-only' });
    assert.equal(outcome.code, 1, outcome.stdout);
    assert.match(
      outcome.stderr,
      new RegExp(`the gateway \\(pid ${gateway.child.pid}\\) refused the config and keeps the one it runs: .*RELOAD_TEST_UNSET_KEY`),
    );
  });

  test('`gateway reload` with no gateway on the port says so', async () => {
    await writeFile(configPath, v1);
    const outcome = await cli(['reload', '--config', configPath, '--port', '1']);
    assert.equal(outcome.code, 1);
    assert.match(outcome.stderr, /no gateway found on port 1: no pid file at .*gateway-1\.pid/);
  });
});
