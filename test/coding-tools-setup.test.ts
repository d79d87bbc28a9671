import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { demoConfigText } from '../src/config/demo-config.ts';
import { startGatewayProcess, type GatewayProcess } from './helpers/gateway-process.ts';
import { startRecordingProxy } from './helpers/recording-proxy.ts';

/**
 * `gateway setup <tool> --write` into a fresh home, then the real Claude Code and Codex (the
 * devDependencies' own binaries) run with nothing but that home, against a gateway on the
 * simulated provider. svc/balanced's candidates get limits unlike the tools' own defaults
 * (200k context, 32k output), so seeing them in the tool proves it read them from the setup.
 */
const run = promisify(execFile);
const bin = resolve('node_modules/.bin');
const directory = mkdtempSync(join(tmpdir(), 'coding-tools-'));
const configText = demoConfigText
  .replace('port: 8787', 'port: 0')
  .replace('path: ./data/gateway.db', `path: ${JSON.stringify(join(directory, 'gateway.db'))}`)
  .replace('context_window: 200000\n    max_output_tokens: 32000', 'context_window: 150000\n    max_output_tokens: 12000')
  .replace('context_window: 200000\n    max_output_tokens: 64000', 'context_window: 180000\n    max_output_tokens: 20000');
const configPath = join(directory, 'gateway.yaml');
writeFileSync(configPath, configText);

/** Only what a person's shell would have: no network settings, nothing of this process's environment. */
function toolEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`,
    HOME: home,
    LANG: 'C.UTF-8',
    // Nothing leaves 127.0.0.1: no telemetry, error reports, update checks or other side traffic.
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    ...extra,
  };
}

async function gatewayCli(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args, '--config', configPath], {
    env: { ...env, NODE_OPTIONS: '' },
  });
  return stdout;
}

/** Runs a tool with standard input closed (Codex reads a prompt from an open one) and resolves with its output. */
function runTool(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(join(bin, command), args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (code === 0) resolvePromise({ stdout, stderr });
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code ?? signal}\nstdout: ${stdout}\nstderr: ${stderr}`));
    });
  });
}

let gateway: GatewayProcess;

before(async () => {
  gateway = await startGatewayProcess(configPath);
  await gatewayCli(['funds', 'add', '20'], process.env);
});
after(async () => {
  await gateway?.stop();
  rmSync(directory, { recursive: true, force: true });
});

async function receiptsOf(key: string, keyId: string): Promise<any[]> {
  const response = await fetch(`${gateway.url}/v1/receipts?limit=50`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(response.status, 200);
  const { data } = (await response.json()) as { data: any[] };
  return data.filter((receipt) => receipt.key.id === keyId);
}

const ANSWER = /This is sim\/steady, a simulated model of the gateway/;

describe('Claude Code', () => {
  test('runs on what setup claude-code --write put in its settings, keeping the settings already there', async () => {
    const home = join(directory, 'claude-home');
    const configDir = join(home, 'claude-config');
    const work = join(home, 'work');
    mkdirSync(configDir, { recursive: true });
    mkdirSync(work, { recursive: true });
    const settingsPath = join(configDir, 'settings.json');
    writeFileSync(settingsPath, JSON.stringify({ theme: 'dark', env: { MY_VARIABLE: 'kept', ANTHROPIC_API_KEY: 'sk-ant-old' } }));

    const proxy = await startRecordingProxy(gateway.url);
    after(() => proxy.close());
    const setup = JSON.parse(
      await gatewayCli(['setup', 'claude-code', '--write', '--json', '--url', proxy.url], toolEnv(home, { CLAUDE_CONFIG_DIR: configDir })),
    );
    assert.equal(setup.written, settingsPath);
    assert.deepEqual(setup.model, { id: 'svc/balanced', candidates: ['sim/steady', 'sim/sage'], context_window: 150000, max_output_tokens: 12000 });
    const settings = JSON.parse(readFileSync(settingsPath, 'utf8'));
    assert.equal(settings.theme, 'dark');
    assert.equal(settings.env.MY_VARIABLE, 'kept');
    assert.equal(settings.env.ANTHROPIC_API_KEY, undefined, 'an old key would be sent beside the new one');
    assert.equal(settings.env.ANTHROPIC_AUTH_TOKEN, setup.key);

    const { stdout, stderr } = await runTool('claude', ['-p', 'Say hello', '--output-format', 'json'], {
      cwd: work,
      env: toolEnv(home, { CLAUDE_CONFIG_DIR: configDir }),
    });
    const result = JSON.parse(stdout);
    assert.equal(result.is_error, false, stdout);
    assert.match(result.result, ANSWER);
    // What Claude Code takes the model to hold, and the most output it asks for: the gateway's limits.
    assert.equal(result.modelUsage['svc/balanced'].contextWindow, 150000);
    const messages = proxy.requests.map((request) => request.body).filter((body) => Array.isArray(body?.messages));
    assert.ok(messages.length >= 1);
    assert.deepEqual([...new Set(messages.map((body) => body.model))], ['svc/balanced']);
    assert.equal(Math.max(...messages.map((body) => body.max_tokens)), 12000);
    assert.doesNotMatch(stderr, /model|context|metadata|warn/i, stderr);

    const receipts = await receiptsOf(setup.key, setup.key_id);
    assert.ok(receipts.length >= 1, 'the minted key has receipts');
    assert.ok(receipts.every((receipt) => receipt.endpoint === 'messages' && receipt.requested_model === 'svc/balanced'));
    assert.ok(receipts.some((receipt) => receipt.status === 'succeeded'));
  });
});

describe('Claude Code with no model set', () => {
  test("sends its own default model name, which the config's claude-* rule routes to svc/balanced", async () => {
    const home = join(directory, 'claude-bare');
    const configDir = join(home, 'claude-config');
    const work = join(home, 'work');
    mkdirSync(configDir, { recursive: true });
    mkdirSync(work, { recursive: true });
    const minted = JSON.parse(await gatewayCli(['keys', 'create', '--name', 'bare-claude', '--json'], process.env));
    // Only where the gateway is and the key: no ANTHROPIC_MODEL nor any other model setting.
    const env = toolEnv(home, { CLAUDE_CONFIG_DIR: configDir, ANTHROPIC_BASE_URL: gateway.url, ANTHROPIC_AUTH_TOKEN: minted.key });
    const { stdout } = await runTool('claude', ['-p', 'Say hello', '--output-format', 'json'], { cwd: work, env });
    const result = JSON.parse(stdout);
    assert.equal(result.is_error, false, stdout);
    assert.match(result.result, ANSWER);

    const receipts = await receiptsOf(minted.key, minted.id);
    assert.ok(receipts.length >= 1, 'the key has receipts');
    for (const receipt of receipts) {
      assert.match(receipt.requested_model, /^claude-/, 'the receipt keeps the name the tool sent');
      assert.equal(receipt.status, 'succeeded');
    }
    assert.ok(
      receipts.some((receipt) => receipt.model === 'sim/steady'),
      'svc/balanced answered',
    );
  });
});

describe('Codex', () => {
  test('runs on what setup codex --write put in CODEX_HOME, without a model metadata warning, keeping the config already there', async () => {
    const home = join(directory, 'codex-home');
    const codexHome = join(home, 'codex');
    const work = join(home, 'work');
    mkdirSync(codexHome, { recursive: true });
    mkdirSync(work, { recursive: true });
    writeFileSync(
      join(codexHome, 'config.toml'),
      ['# mine', 'model = "gpt-5.5"', 'approval_policy = "never"', '', '[profiles.other]', 'model = "o3"', ''].join('\n'),
    );
    writeFileSync(join(codexHome, '.env'), 'OTHER_VARIABLE=kept\n');

    const env = toolEnv(home, { CODEX_HOME: codexHome });
    const setup = JSON.parse(await gatewayCli(['setup', 'codex', '--write', '--json', '--url', gateway.url], env));
    assert.equal(setup.written.catalog, join(codexHome, 'model-gateway-models.json'), setup.written.catalogProblem);
    const config = readFileSync(join(codexHome, 'config.toml'), 'utf8');
    assert.match(config, /^# mine\napproval_policy = "never"\nmodel = "svc\/balanced"\n/);
    assert.match(config, /\[profiles\.other\]\nmodel = "o3"\n/);
    assert.match(config, /model_context_window = 150000\n/);
    assert.match(readFileSync(join(codexHome, '.env'), 'utf8'), new RegExp(`^OTHER_VARIABLE=kept\nMODEL_GATEWAY_API_KEY=${setup.key}\n$`));

    // The catalog Codex itself uses now: the gateway's limits for svc/balanced.
    const catalog = JSON.parse((await runTool('codex', ['debug', 'models'], { cwd: work, env })).stdout);
    const entry = catalog.models.find((model: any) => model.slug === 'svc/balanced');
    assert.equal(entry.context_window, 150000);

    const { stdout, stderr } = await runTool('codex', ['exec', '--skip-git-repo-check', 'Say hello'], { cwd: work, env });
    assert.match(stdout, ANSWER);
    assert.doesNotMatch(stderr, /Model metadata|fallback metadata|unrecognized configuration|is ignored/i, stderr);

    const receipts = await receiptsOf(setup.key, setup.key_id);
    assert.ok(receipts.length >= 1, 'the minted key has receipts');
    assert.ok(receipts.every((receipt) => receipt.endpoint === 'responses' && receipt.requested_model === 'svc/balanced'));
    assert.ok(receipts.some((receipt) => receipt.status === 'succeeded'));
    assert.ok(existsSync(join(codexHome, 'model-gateway-models.json')));
  });
});

describe('Codex with no model set', () => {
  test("sends its own default model name, which the config's gpt-* rule routes to svc/best", async () => {
    const home = join(directory, 'codex-bare');
    const codexHome = join(home, 'codex');
    const work = join(home, 'work');
    mkdirSync(codexHome, { recursive: true });
    mkdirSync(work, { recursive: true });
    const minted = JSON.parse(await gatewayCli(['keys', 'create', '--name', 'bare-codex', '--json'], process.env));
    // A provider pointing at the gateway and nothing else: no `model`, no catalog.
    writeFileSync(
      join(codexHome, 'config.toml'),
      [
        'model_provider = "gateway"',
        'approval_policy = "never"',
        '',
        '[model_providers.gateway]',
        'name = "gateway"',
        `base_url = "${gateway.url}/v1"`,
        'env_key = "GATEWAY_KEY"',
        'wire_api = "responses"',
        '',
      ].join('\n'),
    );
    const env = toolEnv(home, { CODEX_HOME: codexHome, GATEWAY_KEY: minted.key });
    const { stdout } = await runTool('codex', ['exec', '--skip-git-repo-check', 'Say hello'], { cwd: work, env });
    assert.match(stdout, /This is sim\/sage, a simulated model of the gateway/);

    const receipts = await receiptsOf(minted.key, minted.id);
    assert.ok(receipts.length >= 1, 'the key has receipts');
    for (const receipt of receipts) {
      assert.match(receipt.requested_model, /^gpt-/, 'the receipt keeps the name the tool sent');
      assert.equal(receipt.endpoint, 'responses');
    }
    assert.ok(
      receipts.some((receipt) => receipt.status === 'succeeded' && receipt.model === 'sim/sage'),
      'svc/best answered',
    );
  });
});
