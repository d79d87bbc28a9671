import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildServer } from './helpers/build-server.ts';
import { runGateway, temporaryFolders } from '../src/testing/cli-runner.ts';

const folder = fileURLToPath(new URL('../config/examples/', import.meta.url));
const examples = readdirSync(folder).filter((name) => name.endsWith('.yaml'));
const folders = temporaryFolders();

before(() => buildServer());
after(() => folders.removeAll());

/** The variables an example needs: each ${NAME} without a default. */
function keysOf(text: string): string[] {
  return [...new Set([...text.matchAll(/\$\{([A-Z_][A-Z0-9_]*)\}/g)].map((match) => match[1]!))];
}

interface Resolved {
  valid: boolean;
  providers: { id: string; skipped: boolean; unset_variables: string[] }[];
  models: { id: string; skipped: boolean }[];
  aliases: { name: string; candidates: string[] }[];
}

async function checkConfig(file: string, env: Record<string, string | undefined>) {
  const database = join(await folders.make(), 'gateway.db');
  return runGateway(database, ['check-config', '--config', join(folder, file), '--json'], env);
}

test('config/examples holds one config per common setup', () => {
  for (const name of ['openai', 'anthropic', 'openrouter', 'groq', 'deepseek', 'gemini', 'local', 'mixed'])
    assert.ok(examples.includes(`${name}.yaml`), `${name}.yaml`);
});

for (const file of examples) {
  test(`${file}: passes check-config with only its own keys set, every provider kept, every model priced`, async () => {
    const keys = keysOf(readFileSync(join(folder, file), 'utf8'));
    // Every other provider's variable unset: an example needs nothing but its own keys.
    const env: Record<string, string | undefined> = {};
    for (const name of [
      'OPENAI_API_KEY',
      'ANTHROPIC_API_KEY',
      'OPENROUTER_API_KEY',
      'GROQ_API_KEY',
      'DEEPSEEK_API_KEY',
      'GEMINI_API_KEY',
      'LOCAL_URL',
    ])
      env[name] = undefined;
    for (const key of keys) env[key] = `test-${key.toLowerCase()}`;
    const outcome = await checkConfig(file, env);
    assert.equal(outcome.code, 0, outcome.stderr);
    const resolved = JSON.parse(outcome.stdout) as Resolved;
    assert.equal(resolved.valid, true);
    assert.deepEqual(
      resolved.providers.filter((provider) => provider.skipped),
      [],
    );
    assert.ok(resolved.models.length > 0 && resolved.models.every((model) => !model.skipped));
    for (const alias of ['svc/fast', 'svc/balanced', 'svc/best'])
      assert.ok(resolved.aliases.find((entry) => entry.name === alias)?.candidates.length, alias);
  });
}

test('mixed.yaml starts with only one of its keys: the other provider is reported as skipped', async () => {
  const outcome = await checkConfig('mixed.yaml', { OPENAI_API_KEY: 'test-openai', ANTHROPIC_API_KEY: undefined });
  assert.equal(outcome.code, 0, outcome.stderr);
  const resolved = JSON.parse(outcome.stdout) as Resolved;
  const anthropic = resolved.providers.find((provider) => provider.id === 'anthropic');
  assert.deepEqual(anthropic, { ...anthropic, skipped: true, unset_variables: ['ANTHROPIC_API_KEY'] });
  assert.equal(resolved.providers.find((provider) => provider.id === 'openai')?.skipped, false);
});

test('models of an example come from the catalog: gateway models prices them without a price in the file', async () => {
  const database = join(await folders.make(), 'gateway.db');
  const outcome = await runGateway(database, ['models', '--config', join(folder, 'anthropic.yaml'), '--json'], { ANTHROPIC_API_KEY: undefined });
  assert.equal(outcome.code, 0, outcome.stderr);
  assert.doesNotMatch(readFileSync(join(folder, 'anthropic.yaml'), 'utf8'), /price:/);
  const listed = JSON.parse(outcome.stdout) as { models: { id: string; price: { input: string; output: string } }[] };
  const sonnet = listed.models.find((model) => model.id === 'anthropic/claude-sonnet-4-5');
  assert.ok(sonnet, outcome.stdout.slice(0, 400));
  assert.deepEqual([sonnet.price.input, sonnet.price.output], ['3', '15']);
});
