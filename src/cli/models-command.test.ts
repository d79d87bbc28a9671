import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { buildServer } from '../../test/helpers/build-server.ts';
import { runGateway } from '../testing/cli-runner.ts';

let directory: string;

before(async () => {
  buildServer();
  directory = await mkdtemp(join(tmpdir(), 'gateway-models-'));
});
after(() => rm(directory, { recursive: true, force: true }));

// No api_key and no database path that exists: the command needs neither.
const config = `
providers:
  - { id: openai, kind: openai, base_url: "https://api.openai.com/v1" }
  - { id: anthropic, kind: anthropic, base_url: "https://api.anthropic.com" }
models:
  - { id: openai/gpt-4.1-mini, provider: openai, max_output_tokens: 1000 }
  - { id: anthropic/claude-sonnet-4-5, provider: anthropic }
  - { id: openai/*, provider: openai }
aliases:
  svc/fast: { candidates: [openai/gpt-4.1-mini] }
  svc/balanced: { candidates: [anthropic/claude-sonnet-4-5] }
  svc/best: { candidates: [anthropic/claude-sonnet-4-5] }
  team/coder: { candidates: [openai/gpt-4.1-mini, anthropic/claude-sonnet-4-5] }
model_rules:
  - { match: "claude-*", to: svc/balanced }
`;

const gateway = (...args: string[]) => runGateway(join(directory, 'absent', 'gateway.db'), args);

async function configFile(name: string, text: string): Promise<string> {
  const path = join(directory, name);
  await writeFile(path, text);
  return path;
}

test('gateway models lists what the config resolves to, marking what the config set', async () => {
  const outcome = await gateway('models', '--config', await configFile('models.yaml', config));
  assert.equal(outcome.code, 0, outcome.stderr);
  const lines = outcome.stdout.split('\n');
  const mini = lines.find((line) => line.startsWith('openai/gpt-4.1-mini'));
  assert.match(mini ?? '', /openai\s+gpt-4\.1-mini\s+\$0\.40\s+\$0\.10\s+\$0\.40\s+\$1\.60\s+1000000\s+1000\*\s+tools vision -reasoning/);
  const sonnet = lines.findIndex((line) => line.startsWith('anthropic/claude-sonnet-4-5'));
  assert.match(lines[sonnet] ?? '', /\$3\.00\s+\$0\.30\s+\$3\.75\s+\$15\.00\s+200000\s+64000\s+tools vision reasoning/);
  assert.match(lines[sonnet + 1] ?? '', /above 200000 input tokens\s+\$6\.00\s+\$0\.60\s+\$7\.50\s+\$22\.50/);
  assert.match(outcome.stdout, /openai\/\*: any openai\/<name>/);
  assert.match(outcome.stdout, /team\/coder\s+medium\s+openai\/gpt-4\.1-mini, anthropic\/claude-sonnet-4-5/);
  assert.match(outcome.stdout, /claude-\*\s+svc\/balanced/);
  assert.equal(existsSync(join(directory, 'absent')), false, 'no database was opened');
});

test('gateway models --json gives each value with its source', async () => {
  const outcome = await gateway('models', '--json', '--config', await configFile('models.yaml', config));
  assert.equal(outcome.code, 0, outcome.stderr);
  const listed = JSON.parse(outcome.stdout);
  const mini = listed.models.find((model: { id: string }) => model.id === 'openai/gpt-4.1-mini');
  assert.deepEqual(mini.price, {
    unit: 'USD per 1M tokens',
    input: '0.4',
    cached_input: '0.1',
    cache_write: '0.4',
    output: '1.6',
    tiers: [],
    source: 'catalog',
  });
  assert.deepEqual(mini.max_output_tokens, { value: 1000, source: 'config' });
  assert.deepEqual(mini.context_window, { value: 1_000_000, source: 'catalog' });
  assert.deepEqual(mini.capabilities.tools, { value: true, source: 'catalog' });
  assert.equal(mini.catalog_id, 'openai:gpt-4.1-mini');
  assert.deepEqual(listed.wildcards, [{ id: 'openai/*', provider: 'openai', catalog: 'openai' }]);
  assert.deepEqual(listed.warnings, []);
});

test('a model with no price anywhere stops the config, naming it', async () => {
  const unpriced = config.replace('  - { id: openai/*, provider: openai }\n', '  - { id: openai/house-model, provider: openai }\n');
  const outcome = await gateway('models', '--config', await configFile('unpriced.yaml', unpriced));
  assert.notEqual(outcome.code, 0);
  assert.match(outcome.stderr, /no price is known for openai\/house-model: the catalog \(openai\) does not list "house-model"; set its price/);
});
