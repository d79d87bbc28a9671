import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, loadConfigDetails, parseConfig, parseConfigDetails } from './load-config.ts';

const env = { OPENAI_API_KEY: 'sk-o', ANTHROPIC_API_KEY: 'sk-a' };

test('the example config validates, with ${ENV} secrets and ${ENV:-default} fallbacks', () => {
  const config = loadConfig('config/example.yaml', env);
  assert.equal(config.providers.find((provider) => provider.id === 'openai')!.apiKey, 'sk-o');
  assert.equal(config.providers.find((provider) => provider.id === 'local')!.baseUrl, 'http://127.0.0.1:11434/v1');
  const sonnet = config.models.find((model) => model.id === 'anthropic/claude-sonnet-4-5')!;
  assert.equal(sonnet.price.cacheWriteNanoPerMillion, 3_750_000_000);
  assert.equal(config.aliases['svc/best'].reasoning, 'xhigh');
});

test('without a file the built-in demo config runs on the simulated provider', () => {
  const config = loadConfig(undefined, {});
  assert.ok(config.providers.every((provider) => provider.kind === 'simulated'));
  assert.equal(config.aliases['svc/fast'].candidates.length, 2);
});

test("an unset variable outside a provider's connection fields names the variable", () => {
  const text = 'database: { path: "${DATA_DIR}/g.db" }\nproviders: [{ id: sim, kind: simulated }]\nmodels: []\naliases: {}';
  assert.throws(() => parseConfig(text, 'x.yaml', {}), /DATA_DIR is not set/);
});

test('unset provider variables: kept for commands that call no provider, dropped for serving', () => {
  const kept = loadConfigDetails('config/example.yaml', { OPENAI_API_KEY: 'sk-o' });
  assert.deepEqual(kept.unsetProviders, [{ provider: 'anthropic', variables: ['ANTHROPIC_API_KEY'] }]);
  const anthropic = kept.config.providers.find((provider) => provider.id === 'anthropic')!;
  assert.equal(anthropic.apiKey, undefined);
  assert.ok(kept.config.models.some((model) => model.id === 'anthropic/claude-sonnet-4-5'));

  const serving = loadConfigDetails('config/example.yaml', { OPENAI_API_KEY: 'sk-o' }, true).config;
  assert.deepEqual(
    serving.providers.map((provider) => provider.id),
    ['openai', 'local', 'sim'],
  );
  assert.equal(
    serving.models.some((model) => model.provider === 'anthropic'),
    false,
  );
  assert.deepEqual(serving.aliases['svc/balanced'].candidates, ['openai/o4-mini']);
  assert.deepEqual(serving.aliases['svc/best'].candidates, ['openai/o4-mini']);

  const headers = `
providers:
  - { id: p, kind: openai, base_url: "\${P_URL}", headers: { x-team: "\${TEAM}", x-app: gateway } }
  - { id: q, kind: simulated }
models:
  - { id: p/m, provider: p, price: { input: 1, output: 1 }, context_window: 100, max_output_tokens: 50 }
  - { id: q/m, provider: q, price: { input: 1, output: 1 }, context_window: 100, max_output_tokens: 50 }
aliases:
  svc/fast: { candidates: [p/m, q/m], reasoning: low }
  svc/balanced: { candidates: [q/m], reasoning: medium }
  svc/best: { candidates: [p/m], reasoning: xhigh }
`;
  const loaded = parseConfigDetails(headers, 'h.yaml', {});
  assert.deepEqual(loaded.unsetProviders, [{ provider: 'p', variables: ['P_URL', 'TEAM'] }]);
  assert.deepEqual(loaded.config.providers[0]!.headers, { 'x-app': 'gateway' });
  assert.throws(
    () => parseConfigDetails(headers, 'h.yaml', {}, true),
    /^ConfigError: h\.yaml: alias svc\/best has no candidate left: its only candidate is on a provider whose key is not set \(p\/m needs P_URL and TEAM\)$/,
  );
  const served = parseConfigDetails(headers, 'h.yaml', { P_URL: 'http://127.0.0.1:1/v1', TEAM: 't' }, true);
  assert.deepEqual(served.unsetProviders, []);
  assert.equal(served.config.providers[0]!.headers['x-team'], 't');
});

test('validation errors name every bad field', () => {
  const text = `
providers:
  - { id: p, kind: openai }
models:
  - id: p/m
    provider: nobody
    price: { input: "0.1.2", output: 1 }
    context_window: 100
    max_output_tokens: 50
aliases:
  svc/fast: { candidates: [p/m], reasoning: low }
  svc/balanced: { candidates: [p/unknown], reasoning: medium }
  svc/best: { candidates: [p/m], reasoning: extreme }
`;
  assert.throws(
    () => parseConfig(text, 'bad.yaml', {}),
    (error: Error) => {
      assert.ok(error instanceof ConfigError);
      for (const expected of ['providers.0.base_url', 'models.0.price.input', 'aliases.svc/best.reasoning']) {
        assert.ok(error.message.includes(expected), `${expected} in:\n${error.message}`);
      }
      return true;
    },
  );
  assert.throws(
    () =>
      parseConfig(
        text
          .replace('"0.1.2"', '"0.1"')
          .replace('extreme', 'xhigh')
          .replace('{ id: p, kind: openai }', '{ id: p, kind: openai, base_url: "http://x" }'),
        'bad.yaml',
        {},
      ),
    /models\.0\.provider: unknown provider nobody[\s\S]*aliases\.svc\/balanced\.candidates\.0: unknown model p\/unknown/,
  );
});

test('a file that cannot be read or parsed says which and why', async () => {
  assert.throws(() => loadConfig('/nonexistent/gateway.yaml', {}), /cannot read config file \/nonexistent\/gateway.yaml: ENOENT/);
  const directory = await mkdtemp(join(tmpdir(), 'config-'));
  await writeFile(join(directory, 'bad.yaml'), 'providers: [\n');
  assert.throws(() => loadConfig(join(directory, 'bad.yaml'), {}), /not valid YAML/);
  assert.throws(
    () => parseConfig('providers: []\nmodels: []\naliases: {}\nsurprise: 1', 'x.yaml', {}),
    /Unrecognized key\(s\) in object: 'surprise'/,
  );
});
