import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';
import { startRecordingProxy, type ProxiedRequest } from './helpers/recording-proxy.ts';

/**
 * The real Claude Code (the devDependency's binary) against the gateway, once on an alias of an
 * Anthropic-kind model and once on one of an OpenAI-kind model, both served by the fake provider.
 * Its anthropic-beta flags and its own cache breakpoints reach the Anthropic-kind provider as it
 * sent them; the OpenAI-kind one gets neither, and the receipt says which betas were dropped.
 */
const bin = resolve('node_modules/.bin');
const directory = mkdtempSync(join(tmpdir(), 'claude-betas-'));

let harness: Harness;
let proxy: Awaited<ReturnType<typeof startRecordingProxy>>;
before(async () => {
  harness = await startHarness({
    timeoutMs: 30_000,
    editConfig: (text) =>
      text.replace('aliases:\n', 'aliases:\n  team/claude: { candidates: [anth/claude] }\n  team/gpt: { candidates: [up/alpha] }\n'),
  });
  proxy = await startRecordingProxy(harness.gateway.url);
});
after(async () => {
  await proxy?.close();
  await harness?.close();
  rmSync(directory, { recursive: true, force: true });
});

/** Runs `claude -p` on `model` through the proxy; resolves with its JSON result. */
function runClaude(model: string): Promise<any> {
  const home = join(directory, model.replace('/', '-'));
  mkdirSync(join(home, 'work'), { recursive: true });
  const env = {
    PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`,
    HOME: home,
    LANG: 'C.UTF-8',
    CLAUDE_CONFIG_DIR: join(home, 'config'),
    ANTHROPIC_BASE_URL: proxy.url,
    ANTHROPIC_AUTH_TOKEN: harness.key,
    ANTHROPIC_MODEL: model,
    ANTHROPIC_SMALL_FAST_MODEL: model,
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
  return new Promise((done, fail) => {
    const child = spawn(join(bin, 'claude'), ['-p', 'Say hello', '--output-format', 'json'], {
      cwd: join(home, 'work'),
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('close', (code) => (code === 0 ? done(JSON.parse(stdout)) : fail(new Error(`claude exited with ${code}\n${stdout}\n${stderr}`))));
  });
}

/** Every cache_control in a Messages body (tools, system, messages), as JSON text. */
function breakpoints(body: any): string[] {
  const found: string[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === 'object' && value !== null) {
      const record = value as Record<string, unknown>;
      if (record.cache_control !== undefined) found.push(JSON.stringify(record.cache_control));
      if (Array.isArray(record.content)) walk(record.content);
    }
  };
  walk(body.tools);
  walk(body.system);
  walk(body.messages);
  return found;
}

const betasOf = (headers: ProxiedRequest['headers']) =>
  String(headers['anthropic-beta'] ?? '')
    .split(',')
    .map((beta) => beta.trim())
    .filter(Boolean);

const messagesCalls = (requests: ProxiedRequest[]) =>
  requests.filter((request) => request.path.startsWith('/v1/messages?') || request.path === '/v1/messages');

describe('Claude Code on an Anthropic-kind model', () => {
  test('its betas and its own breakpoints reach the provider as it sent them', async () => {
    proxy.requests.length = 0;
    harness.fake.reset();
    const result = await runClaude('team/claude');
    assert.equal(result.is_error, false, JSON.stringify(result));
    assert.match(result.result, /Hello from claude-x/);

    const sent = messagesCalls(proxy.requests);
    const upstream = harness.fake.requests.filter((request) => request.path === '/v1/messages');
    assert.ok(sent.length >= 1);
    assert.equal(upstream.length, sent.length);
    // Calls may finish in another order than they started: pair them by their last turn (Claude
    // Code sends its prompt as role "system" messages to a model it does not know; they go to `system`).
    const key = (body: any) => JSON.stringify(body.messages.filter((message: any) => message.role !== 'system').at(-1));
    for (const client of sent) {
      const provider = upstream.find((request) => key(request.body) === key(client.body));
      assert.ok(provider, 'the provider got the call');
      assert.ok(betasOf(client.headers).length > 0, 'Claude Code sends betas');
      for (const beta of betasOf(client.headers)) assert.ok(betasOf(provider.headers).includes(beta), `${beta} forwarded`);
      assert.equal(provider.headers['anthropic-version'], client.headers['anthropic-version']);
      assert.deepEqual(breakpoints(provider.body).sort(), breakpoints(client.body).sort(), 'the same breakpoints, none added');
    }
    assert.ok(
      sent.some((client) => breakpoints(client.body).length > 0),
      'Claude Code marks breakpoints of its own',
    );
  });
});

describe('Claude Code on an OpenAI-kind model', () => {
  test('answers with no beta sent upstream; the receipt names each beta dropped', async () => {
    proxy.requests.length = 0;
    harness.fake.reset();
    const result = await runClaude('team/gpt');
    assert.equal(result.is_error, false, JSON.stringify(result));
    assert.match(result.result, /Hello from alpha/);

    const upstream = harness.fake.requests.filter((request) => request.path === '/v1/chat/completions');
    assert.ok(upstream.length >= 1);
    for (const request of upstream) {
      assert.equal(request.headers['anthropic-beta'], undefined);
      assert.doesNotMatch(JSON.stringify(request.body), /cache_control/);
    }
    const betas = [...new Set(messagesCalls(proxy.requests).flatMap((request) => betasOf(request.headers)))];
    assert.ok(betas.includes('claude-code-20250219'), betas.join(','));
    const receipts = (await (await harness.get('/v1/receipts?limit=20')).json()) as { data: Array<{ model: string; warnings: string[] }> };
    const warnings = receipts.data.filter((receipt) => receipt.model === 'up/alpha').flatMap((receipt) => receipt.warnings);
    assert.ok(
      warnings.includes('up/alpha: anthropic-beta claude-code-20250219: a beta with no equivalent for this model; dropped'),
      warnings.join('\n'),
    );
    // Betas whose effect the model gets anyway (its provider caches prefixes itself; system messages stay in place).
    for (const honoured of betas.filter((beta) => /^(prompt-caching-|mid-conversation-system-|effort-)/.test(beta))) {
      assert.ok(!warnings.some((warning) => warning.includes(honoured)), `${honoured} is not dropped`);
    }
    assert.ok(
      betas.some((beta) => beta.startsWith('prompt-caching-')),
      betas.join(','),
    );
  });
});
