import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { issueApiKey } from '../src/auth/issue-api-key.ts';
import { parseConfig } from '../src/config/load-config.ts';
import { createGateway, type RunningGateway } from '../src/gateway.ts';
import { NANO_PER_USD } from '../src/lib/money.ts';
import { DEFAULT_ACCOUNT_ID } from '../src/storage/store.ts';
import { jsonReply, loadFixture, startFixtureServer, type FixtureServer } from '../src/testing/fixture-server.ts';

// Real HTTP to a fixture provider that answers in OpenAI's and Anthropic's recorded shapes.
const openAiFixtures = new URL('../src/providers/openai-compatible/__fixtures__/', import.meta.url);
const anthropicFixtures = new URL('../src/providers/anthropic/__fixtures__/', import.meta.url);
/** usage: 1234 prompt tokens, 1024 of them cached, 12 completion tokens. */
const openAiText = loadFixture(openAiFixtures, 'openai-text.json');
/** usage: 472 uncached input tokens, 1024 cache reads, 12 output tokens. */
const anthropicText = loadFixture(anthropicFixtures, 'anthropic-text.json');

/** Every model is named by id and provider alone; o4-mini's price is set to differ from the catalog's. */
function configText(url: string, databasePath: string): string {
  return `
server: { host: 127.0.0.1, port: 0 }
database: { path: ${JSON.stringify(databasePath)} }
providers:
  - { id: openai, kind: openai, base_url: "${url}/v1", api_key: sk-test, catalog: openai }
  - { id: anthropic, kind: anthropic, base_url: "${url}", api_key: sk-ant-test }
models:
  - { id: openai/gpt-4.1-mini, provider: openai }
  - { id: anthropic/claude-sonnet-4-5, provider: anthropic }
  - { id: openai/o4-mini, provider: openai, price: { input: "1.00", output: "4.40" } }
  - { id: openai/*, provider: openai }
aliases:
  svc/fast: { candidates: [openai/gpt-4.1-mini] }
  svc/balanced: { candidates: [anthropic/claude-sonnet-4-5] }
  svc/best: { candidates: [anthropic/claude-sonnet-4-5, openai/gpt-4.1-mini] }
  team/coder: { candidates: [openai/gpt-4.1-mini, anthropic/claude-sonnet-4-5] }
model_rules:
  - { match: "claude-*", to: svc/balanced }
`;
}

describe('models from the built-in catalog, over real HTTP', () => {
  let provider: FixtureServer;
  let gateway: RunningGateway;
  let directory: string;
  let key: string;
  const logged: Array<{ level: number; msg: string }> = [];

  before(async () => {
    provider = await startFixtureServer();
    directory = await mkdtemp(join(tmpdir(), 'gateway-catalog-'));
    const config = parseConfig(configText(provider.url, join(directory, 'gateway.db')), 'catalog.yaml', {});
    const logger = pino({ level: 'warn' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
    gateway = await createGateway(config, { logger: logger as unknown as FastifyBaseLogger });
    ({ key } = await issueApiKey(gateway.deps.store, { name: 'test', scopes: ['inference'] }));
    await gateway.deps.store.addFunds(DEFAULT_ACCOUNT_ID, 10 * NANO_PER_USD, 'test');
  });

  after(async () => {
    await gateway?.close();
    await provider?.close();
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  const post = (path: string, body: unknown, useKey = key, headers: Record<string, string> = {}) =>
    fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${useKey}`, ...headers },
      body: JSON.stringify(body),
    });
  const chat = (model: string, useKey = key) =>
    post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'Capital of France?' }] }, useKey);
  async function receiptOf(response: Response) {
    const id = response.headers.get('x-svc-receipt-id');
    assert.ok(id, 'the answer names its receipt');
    const got = await fetch(`${gateway.url}/v1/receipts/${id}`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(got.status, 200);
    return (await got.json()) as Record<string, any>;
  }

  test('start-up warns of a configured price that differs from the catalog', () => {
    const warning = logged.find((line) => line.level === 40 && line.msg.includes('openai/o4-mini'));
    assert.ok(warning, JSON.stringify(logged));
    assert.match(warning.msg, /configured price \(input 1, .*\) differs from the catalog's openai:o4-mini \(input 1\.1, cached_input 0\.275/);
  });

  test('a model named by id and provider alone is called by its upstream name and billed at the catalog price', async () => {
    provider.reset();
    provider.reply(jsonReply(openAiText));
    const response = await chat('openai/gpt-4.1-mini');
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal((provider.requests[0]?.body as { model: string }).model, 'gpt-4.1-mini');
    const receipt = await receiptOf(response);
    // 210 uncached x $0.40 + 1024 cached x $0.10 + 12 out x $1.60, per 1M: $0.000084 + $0.0001024 + $0.0000192.
    assert.equal(receipt.cost, '0.000205600');
    assert.deepEqual(receipt.prices_per_million_tokens, {
      input: '0.400000000',
      cached_input: '0.100000000',
      cache_write: '0.400000000',
      output: '1.600000000',
    });
  });

  test('a custom alias falls back to its next candidate', async () => {
    provider.reset();
    provider.reply(jsonReply({ error: { message: 'overloaded', type: 'server_error' } }, 503), jsonReply(anthropicText));
    const response = await chat('team/coder');
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal(response.headers.get('x-svc-model'), 'anthropic/claude-sonnet-4-5');
    const receipt = await receiptOf(response);
    assert.equal(receipt.requested_model, 'team/coder');
    assert.deepEqual(
      receipt.attempts.map((attempt: { model: string; outcome: string }) => [attempt.model, attempt.outcome]),
      [
        ['openai/gpt-4.1-mini', 'failed'],
        ['anthropic/claude-sonnet-4-5', 'succeeded'],
      ],
    );
    // 472 x $3 + 1024 cache reads x $0.30 + 12 x $15, per 1M: $0.001416 + $0.0003072 + $0.00018.
    assert.equal(receipt.cost, '0.001903200');
  });

  test("Claude Code's default model name is served through the claude-* rule on /v1/messages", async () => {
    provider.reset();
    provider.reply(jsonReply(anthropicText));
    const body = JSON.parse(readFileSync(new URL('./fixtures/claude-code-messages-request.json', import.meta.url), 'utf8'));
    body.model = 'claude-sonnet-4-5-20250929';
    body.stream = false;
    const response = await post('/v1/messages', body, key, { 'anthropic-version': '2023-06-01' });
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal((provider.requests[0]?.body as { model: string }).model, 'claude-sonnet-4-5');
    const receipt = await receiptOf(response);
    assert.equal(receipt.requested_model, 'claude-sonnet-4-5-20250929');
    assert.equal(receipt.model, 'anthropic/claude-sonnet-4-5');
  });

  test('openai/* serves an unlisted model priced by the catalog, and refuses one it has no price for', async () => {
    provider.reset();
    provider.reply(jsonReply(openAiText));
    const response = await chat('openai/gpt-4.1-nano');
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal((provider.requests[0]?.body as { model: string }).model, 'gpt-4.1-nano');
    const receipt = await receiptOf(response);
    assert.equal(receipt.model, 'openai/gpt-4.1-nano');
    // 210 x $0.10 + 1024 x $0.025 + 12 x $0.40, per 1M: $0.000021 + $0.0000256 + $0.0000048.
    assert.equal(receipt.cost, '0.000051400');

    provider.reset();
    const refused = await chat('openai/gpt-unknown-9');
    assert.equal(refused.status, 400);
    const { error } = (await refused.json()) as { error: { code: string; message: string } };
    assert.equal(error.code, 'unsupported_model');
    assert.match(error.message, /no price is known for openai\/gpt-unknown-9/);
    assert.equal(provider.requests.length, 0);
  });

  test('a mistyped alias gets a suggestion', async () => {
    const response = await chat('svc/fsat');
    assert.equal(response.status, 400);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    assert.equal(error.code, 'unsupported_model');
    assert.match(error.message, /did you mean "svc\/fast"\?/);
  });

  test('allow-lists pass a rule target or a wildcard entry, never more', async () => {
    const { key: balancedOnly } = await issueApiKey(gateway.deps.store, { name: 'balanced', scopes: ['inference'], models: ['svc/balanced'] });
    const { key: anyOpenAi } = await issueApiKey(gateway.deps.store, { name: 'openai', scopes: ['inference'], models: ['openai/*'] });
    provider.reset();
    provider.reply(jsonReply(anthropicText), jsonReply(openAiText));
    assert.equal((await chat('claude-opus-4-1-20250805', balancedOnly)).status, 200);
    assert.equal((await chat('openai/gpt-4.1-nano', anyOpenAi)).status, 200);
    const refused = await chat('svc/fast', balancedOnly);
    assert.equal(refused.status, 403);
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'model_not_allowed');
    assert.equal((await chat('team/coder', anyOpenAi)).status, 403);
  });

  test('/v1/models lists custom aliases, tiered prices and the wildcard entry', async () => {
    const response = await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    const { data } = (await response.json()) as { data: Array<Record<string, any>> };
    const byId = new Map(data.map((entry) => [entry.id, entry]));
    assert.deepEqual(byId.get('team/coder')?.candidates, ['openai/gpt-4.1-mini', 'anthropic/claude-sonnet-4-5']);
    assert.equal(byId.get('team/coder')?.default_reasoning_effort, 'medium');
    assert.deepEqual(byId.get('anthropic/claude-sonnet-4-5')?.pricing.tiers, [
      { above_input_tokens: 200_000, input: '6.000000000', cached_input: '0.600000000', cache_write: '7.500000000', output: '22.500000000' },
    ]);
    assert.equal(byId.get('openai/*')?.type, 'wildcard');
    assert.equal(byId.get('openai/*')?.owned_by, 'openai');

    const { key: anyOpenAi } = await issueApiKey(gateway.deps.store, { name: 'openai list', scopes: ['inference'], models: ['openai/*'] });
    const listed = (await (await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${anyOpenAi}` } })).json()) as {
      data: Array<{ id: string }>;
    };
    assert.deepEqual(
      listed.data.map((entry) => entry.id),
      ['openai/gpt-4.1-mini', 'openai/o4-mini', 'openai/*'],
    );
  });
});
