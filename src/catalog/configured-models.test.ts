import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, parseConfig } from '../config/load-config.ts';
import { ModelCatalog } from '../routing/model-catalog.ts';
import { GatewayError } from '../errors/gateway-error.ts';

const providers = `
providers:
  - { id: openai, kind: openai, base_url: "https://api.openai.com/v1" }
  - { id: anthropic, kind: anthropic, base_url: "https://api.anthropic.com" }
  - { id: local, kind: openai, base_url: "http://127.0.0.1:11434/v1", catalog: none }
`;

const aliases = `
aliases:
  svc/fast: { candidates: [openai/gpt-4.1-mini] }
  svc/balanced: { candidates: [anthropic/claude-sonnet-4-5] }
  svc/best: { candidates: [anthropic/claude-sonnet-4-5, openai/gpt-4.1-mini] }
`;

const configWith = (models: string, more = '') => parseConfig(`${providers}models:\n${models}${aliases}${more}`, 'test.yaml', {});

describe('a config of only ids and providers', () => {
  const config = configWith(`
  - { id: openai/gpt-4.1-mini, provider: openai }
  - { id: anthropic/claude-sonnet-4-5, provider: anthropic }
`);

  test('takes prices, context window, output limit and capabilities from the catalog', () => {
    const [mini, sonnet] = config.models;
    assert.equal(mini?.upstream, 'gpt-4.1-mini');
    assert.deepEqual(mini?.price, {
      inputNanoPerMillion: 400_000_000,
      cachedInputNanoPerMillion: 100_000_000,
      cacheWriteNanoPerMillion: 400_000_000,
      outputNanoPerMillion: 1_600_000_000,
    });
    assert.equal(mini?.contextWindow, 1_000_000);
    assert.equal(mini?.maxOutputTokens, 32_768);
    assert.deepEqual(mini?.capabilities, { tools: true, vision: true, reasoning: false, structured_output: true });
    assert.equal(sonnet?.price.cacheWriteNanoPerMillion, 3_750_000_000);
    assert.equal(sonnet?.priceTiers[0]?.aboveInputTokens, 200_000);
    assert.equal(sonnet?.capabilities.structured_output, false);
    assert.deepEqual(sonnet?.sources, {
      price: 'catalog',
      context_window: 'catalog',
      max_output_tokens: 'catalog',
      tools: 'catalog',
      vision: 'catalog',
      reasoning: 'catalog',
    });
    assert.deepEqual(config.catalogWarnings, []);
  });

  test('keeps the contract reasoning levels of the svc aliases, and has no name rules unless it lists them', () => {
    assert.equal(config.aliases['svc/fast'].reasoning, 'low');
    assert.equal(config.aliases['svc/balanced'].reasoning, 'medium');
    assert.equal(config.aliases['svc/best'].reasoning, 'xhigh');
    assert.deepEqual(config.modelRules, []);
    assert.throws(() => new ModelCatalog(config).route('claude-sonnet-4-5-20250929'), /neither an alias nor a model id/);
  });
});

test('config values override the catalog, each on its own, and a differing price is a warning', () => {
  const config = configWith(`
  - id: openai/gpt-4.1-mini
    provider: openai
    price: { input: "0.50", output: "2" }
    max_output_tokens: 1000
    capabilities: { vision: false }
  - { id: anthropic/claude-sonnet-4-5, provider: anthropic }
`);
  const mini = config.models[0]!;
  assert.equal(mini.price.inputNanoPerMillion, 500_000_000);
  assert.equal(mini.price.cachedInputNanoPerMillion, 500_000_000);
  assert.equal(mini.maxOutputTokens, 1000);
  assert.equal(mini.contextWindow, 1_000_000);
  assert.equal(mini.capabilities.vision, false);
  assert.equal(mini.capabilities.tools, true);
  assert.equal(mini.sources.price, 'config');
  assert.equal(mini.sources.vision, 'config');
  assert.equal(mini.sources.tools, 'catalog');
  assert.equal(config.catalogWarnings.length, 1);
  assert.match(
    config.catalogWarnings[0]!,
    /openai\/gpt-4\.1-mini: the configured price \(input 0\.5, .*output 2\) differs from the catalog's openai:gpt-4\.1-mini \(input 0\.4, cached_input 0\.1, .*output 1\.6\)/,
  );
});

test('a model priced by neither the config nor the catalog stops the start, naming it', () => {
  assert.throws(
    () =>
      configWith(`
  - { id: openai/gpt-4.1-mini, provider: openai }
  - { id: anthropic/claude-sonnet-4-5, provider: anthropic }
  - { id: local/qwen, provider: local }
  - { id: openai/house-model, provider: openai }
`),
    (error: Error) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /models\.2: no price is known for local\/qwen: provider local uses no catalog; set its price/);
      assert.match(error.message, /models\.3: no price is known for openai\/house-model: the catalog \(openai\) does not list "house-model"/);
      return true;
    },
  );
});

describe('custom aliases, name rules and wildcard models', () => {
  const config = configWith(
    `
  - { id: openai/gpt-4.1-mini, provider: openai }
  - { id: anthropic/claude-sonnet-4-5, provider: anthropic }
  - { id: openai/*, provider: openai }
`,
    `  team/coder: { candidates: [openai/gpt-4.1-nano, anthropic/claude-sonnet-4-5] }
model_rules:
  - { match: "claude-haiku-*", to: openai/gpt-4.1-nano }
  - { match: "claude-*", to: team/coder }
  - { match: "codex", to: svc/best }
`,
  );
  const catalog = new ModelCatalog(config);

  test('a custom alias may name a wildcard model; it is resolved at start', () => {
    assert.deepEqual(config.aliases['team/coder'], { candidates: ['openai/gpt-4.1-nano', 'anthropic/claude-sonnet-4-5'], reasoning: 'medium' });
    assert.deepEqual(
      catalog.aliases.get('team/coder')?.candidates.map((model) => [model.id, model.upstream, model.price.inputNanoPerMillion]),
      [
        ['openai/gpt-4.1-nano', 'gpt-4.1-nano', 100_000_000],
        ['anthropic/claude-sonnet-4-5', 'claude-sonnet-4-5', 3_000_000_000],
      ],
    );
  });

  test('rules: first match wins, globs and exact names', () => {
    assert.deepEqual(catalog.route('claude-haiku-4-5-20251001').names, ['claude-haiku-4-5-20251001', 'openai/gpt-4.1-nano', 'openai/*']);
    assert.equal(catalog.route('claude-sonnet-4-5-20250929').alias?.name, 'team/coder');
    assert.equal(catalog.route('codex').alias?.name, 'svc/best');
    assert.equal(catalog.route('svc/fast').alias?.name, 'svc/fast');
  });

  test('a wildcard model is priced from the catalog, and refused when it has no price', () => {
    const model = catalog.route('openai/gpt-4o-mini').model;
    assert.equal(model?.upstream, 'gpt-4o-mini');
    assert.equal(model?.price.inputNanoPerMillion, 150_000_000);
    assert.throws(
      () => catalog.route('openai/gpt-unknown-9'),
      (error: unknown) =>
        error instanceof GatewayError &&
        error.code === 'unsupported_model' &&
        /no price is known for openai\/gpt-unknown-9: the catalog \(openai\) does not list "gpt-unknown-9"/.test(error.message),
    );
  });

  test('an unknown name gets the nearest known one', () => {
    assert.throws(() => catalog.route('svc/fsat'), /did you mean "svc\/fast"\?/);
    assert.throws(() => catalog.route('team/codr'), /did you mean "team\/coder"\?/);
  });

  test('the svc aliases must exist; a rule must name an alias or a model', () => {
    assert.throws(
      () =>
        parseConfig(
          `${providers}models:\n  - { id: openai/gpt-4.1-mini, provider: openai }\naliases:\n  team/coder: { candidates: [openai/gpt-4.1-mini] }\n`,
          't',
          {},
        ),
      /aliases\.svc\/fast: required[\s\S]*aliases\.svc\/best: required/,
    );
    assert.throws(
      () =>
        configWith(
          `  - { id: openai/gpt-4.1-mini, provider: openai }\n  - { id: anthropic/claude-sonnet-4-5, provider: anthropic }\n`,
          'model_rules:\n  - { match: "x-*", to: svc/nope }\n',
        ),
      /model_rules\.0\.to: neither an alias nor a model: svc\/nope/,
    );
  });
});
