import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, beforeEach, describe, test } from 'node:test';
import { hashApiKey } from '../auth/api-key-format.ts';
import { loadConfig } from '../config/load-config.ts';
import { createSqliteStore } from '../storage/sqlite/sqlite-store.ts';
import { DEFAULT_ACCOUNT_ID } from '../storage/store.ts';
import { runCli } from './run-cli.ts';
import { claudeCodeSettingsPath } from './setup-claude-code.ts';
import { codexCatalogEntry, mergeCodexToml, mergeDotenv, pickCodexTemplate } from './setup-codex.ts';
import { gatewayBaseUrl, type ToolModel, type ToolSetup } from './setup-commands.ts';

const directory = mkdtempSync(join(tmpdir(), 'gateway-setup-'));
after(() => rmSync(directory, { recursive: true, force: true }));

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(directory, 'home-'));
  process.env.DATABASE_PATH = join(directory, 'gateway.db');
  process.env.HOME = home;
  // No Codex here: the catalog needs it, the rest must not.
  process.env.PATH = '/usr/bin:/bin';
  delete process.env.CLAUDE_CONFIG_DIR;
  delete process.env.CODEX_HOME;
  delete process.env.GATEWAY_CONFIG;
  delete process.env.PORT;
});

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, { stdout: (text) => (stdout += `${text}\n`), stderr: (text) => (stderr += `${text}\n`) });
  return { code, stdout, stderr };
}

async function storedKey(key: string) {
  const store = createSqliteStore(process.env.DATABASE_PATH!);
  try {
    const keys = await store.listKeys(DEFAULT_ACCOUNT_ID);
    return keys.find((record) => record.hash === hashApiKey(key));
  } finally {
    await store.close();
  }
}

describe('setup claude-code', () => {
  test('prints the env block for the demo config, with a new key for Claude Code allowed only its model', async () => {
    const { code, stdout } = await cli('setup', 'claude-code');
    assert.equal(code, 0);
    assert.match(stdout, /Gateway: http:\/\/127\.0\.0\.1:8787\n/);
    assert.match(stdout, /svc\/balanced: context window 200000, output limit 32000 tokens \(smallest among sim\/steady, sim\/sage\)/);
    assert.match(stdout, /"CLAUDE_CODE_MAX_CONTEXT_TOKENS": "200000"/);
    const key = /"ANTHROPIC_AUTH_TOKEN": "(svc_[^"]+)"/.exec(stdout)![1]!;
    const record = await storedKey(key);
    assert.equal(record?.name, 'claude-code');
    assert.deepEqual(record?.scopes, ['inference']);
    assert.deepEqual(record?.models, ['svc/balanced']);
    assert.equal(existsSync(join(home, '.claude', 'settings.json')), false, 'nothing written without --write');
  });

  test('--write merges into CLAUDE_CONFIG_DIR/settings.json; a file that is not JSON is left alone', async () => {
    const configDir = join(home, 'config');
    mkdirSync(configDir);
    process.env.CLAUDE_CONFIG_DIR = configDir;
    const path = join(configDir, 'settings.json');
    writeFileSync(path, JSON.stringify({ permissions: { allow: ['Bash(ls)'] }, env: { KEEP: '1' } }));
    const { code, stdout } = await cli('setup', 'claude-code', '--write', '--json', '--model', 'svc/fast', '--url', 'http://gw.example:9000/v1/');
    assert.equal(code, 0);
    const json = JSON.parse(stdout);
    const settings = JSON.parse(readFileSync(path, 'utf8'));
    assert.deepEqual(settings.permissions, { allow: ['Bash(ls)'] });
    assert.equal(settings.env.KEEP, '1');
    assert.equal(settings.env.ANTHROPIC_BASE_URL, 'http://gw.example:9000');
    assert.equal(settings.env.ANTHROPIC_AUTH_TOKEN, json.key);
    assert.equal(settings.env.ANTHROPIC_DEFAULT_HAIKU_MODEL, 'svc/fast');
    assert.equal(settings.env.CLAUDE_CODE_MAX_CONTEXT_TOKENS, '128000');
    assert.equal(settings.env.CLAUDE_CODE_MAX_OUTPUT_TOKENS, '16384');
    assert.equal(json.written, path);

    writeFileSync(path, '{ not json');
    const broken = await cli('setup', 'claude-code', '--write');
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /settings\.json is not valid JSON/);
    assert.equal(readFileSync(path, 'utf8'), '{ not json');
  });

  test('mistakes: an unknown model names the choices, a wrong scope, codex takes no --scope', async () => {
    const unknown = await cli('setup', 'claude-code', '--model', 'svc/huge');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /unknown model "svc\/huge"; choose from: svc\/fast, svc\/balanced, svc\/best, sim\/swift-mini/);
    assert.match((await cli('setup', 'claude-code', '--scope', 'team')).stderr, /--scope must be user, project or local/);
    const codex = await cli('setup', 'codex', '--scope', 'project');
    assert.equal(codex.code, 2);
    assert.match(codex.stderr, /setup codex does not take --scope/);
  });

  test('settings paths by scope', () => {
    assert.equal(claudeCodeSettingsPath('user', { HOME: '/h' }, '/w'), '/h/.claude/settings.json');
    assert.equal(claudeCodeSettingsPath('user', { HOME: '/h', CLAUDE_CONFIG_DIR: '/c' }, '/w'), '/c/settings.json');
    assert.equal(claudeCodeSettingsPath('project', {}, '/w'), '/w/.claude/settings.json');
    assert.equal(claudeCodeSettingsPath('local', {}, '/w'), '/w/.claude/settings.local.json');
  });
});

describe('setup codex', () => {
  test('--write without Codex installed: config.toml and .env, no catalog, and says so', async () => {
    const codexHome = join(home, 'codex');
    process.env.CODEX_HOME = codexHome;
    const { code, stdout } = await cli('setup', 'codex', '--write');
    assert.equal(code, 0);
    const config = readFileSync(join(codexHome, 'config.toml'), 'utf8');
    assert.match(config, /^model = "svc\/balanced"\nmodel_provider = "model-gateway"\nmodel_context_window = 200000\n\n/);
    assert.match(config, /\[model_providers\.model-gateway\]\nname = "model-gateway"\nbase_url = "http:\/\/127\.0\.0\.1:8787\/v1"\n/);
    assert.match(config, /env_key = "MODEL_GATEWAY_API_KEY"\nwire_api = "responses"\n$/);
    assert.doesNotMatch(config, /model_catalog_json/);
    const key = /^MODEL_GATEWAY_API_KEY=(svc_\S+)\n$/.exec(readFileSync(join(codexHome, '.env'), 'utf8'))![1]!;
    assert.equal((await storedKey(key))?.name, 'codex');
    assert.match(stdout, /No model catalog written: "codex debug models --bundled" failed .*is Codex on PATH\?/);
  });

  test('prints the config without writing it', async () => {
    const { code, stdout } = await cli('setup', 'codex', '--model', 'sim/sage');
    assert.equal(code, 0);
    assert.match(stdout, /Put this in .*\.codex\/config\.toml:\nmodel = "sim\/sage"\n/);
    assert.match(stdout, /export MODEL_GATEWAY_API_KEY=svc_/);
    assert.equal(existsSync(join(home, '.codex')), false);
  });
});

const setup: ToolSetup = {
  baseUrl: 'http://127.0.0.1:8787',
  key: 'svc_new',
  keyId: 'key_1',
  keyName: 'codex',
  model: { id: 'svc/best', contextWindow: 100, maxOutputTokens: 10 } as ToolModel,
};

test('mergeCodexToml replaces its own settings and provider table and keeps every other line', () => {
  const before = [
    '# top comment',
    'model = "o3"',
    'model_context_window = 5',
    '',
    '[model_providers.model-gateway]',
    'base_url = "http://old/v1"',
    '',
    '[profiles.fast]',
    'model = "gpt-5.5" # a profile of my own',
  ].join('\n');
  assert.equal(
    mergeCodexToml(before, setup, '/c/cat.json'),
    [
      '# top comment',
      'model = "svc/best"',
      'model_provider = "model-gateway"',
      'model_context_window = 100',
      'model_catalog_json = "/c/cat.json"',
      '',
      '[profiles.fast]',
      'model = "gpt-5.5" # a profile of my own',
      '',
      '[model_providers.model-gateway]',
      'name = "model-gateway"',
      'base_url = "http://127.0.0.1:8787/v1"',
      'env_key = "MODEL_GATEWAY_API_KEY"',
      'wire_api = "responses"',
      '',
    ].join('\n'),
  );
  assert.equal(mergeDotenv('A=1\nexport MODEL_GATEWAY_API_KEY=svc_old\n', 'svc_new'), 'A=1\nMODEL_GATEWAY_API_KEY=svc_new\n');
});

test('mergeCodexToml in the built-in form points Codex’s own provider at the gateway: openai_base_url, no model_provider, no table of ours', () => {
  const before = ['model = "o3"', 'model_provider = "model-gateway"', '', '[model_providers.model-gateway]', 'base_url = "http://old/v1"', ''].join(
    '\n',
  );
  assert.equal(
    mergeCodexToml(before, setup, '/c/cat.json', 'built-in'),
    [
      'model = "svc/best"',
      'openai_base_url = "http://127.0.0.1:8787/v1"',
      'model_context_window = 100',
      'model_catalog_json = "/c/cat.json"',
      '',
    ].join('\n'),
  );
});

test('the catalog entry starts from Codex’s first listed API model with the standard tools and takes the gateway’s limits', () => {
  const bundled = [
    { slug: 'hidden', priority: 0, visibility: 'hide', supported_in_api: true, tool_mode: null },
    { slug: 'code-mode', priority: 1, visibility: 'list', supported_in_api: true, tool_mode: 'code_mode_only' },
    { slug: 'plain', priority: 2, visibility: 'list', supported_in_api: true, tool_mode: null, base_instructions: 'You are Codex.' },
  ];
  const template = pickCodexTemplate(bundled)!;
  assert.equal(template.slug, 'plain');
  const model = { id: 'svc/fast', candidates: [{ id: 'a/x' }, { id: 'b/y' }], contextWindow: 1000, vision: false, reasoning: false } as ToolModel;
  const entry = codexCatalogEntry({ ...template, auto_compact_token_limit: 5, service_tiers: [{ id: 'priority' }] }, model);
  assert.equal(entry.slug, 'svc/fast');
  assert.equal(entry.base_instructions, 'You are Codex.');
  assert.equal(entry.context_window, 1000);
  assert.equal(entry.max_context_window, 1000);
  assert.equal('auto_compact_token_limit' in entry, false);
  assert.deepEqual(entry.input_modalities, ['text']);
  assert.deepEqual(entry.supported_reasoning_levels, []);
  assert.deepEqual(entry.service_tiers, []);
});

test('gatewayBaseUrl: --url without /v1, else the listening address, a wildcard host on loopback', () => {
  const config = loadConfig(undefined, {});
  assert.equal(gatewayBaseUrl(config, 'https://gw.example/v1/'), 'https://gw.example');
  config.server.host = '0.0.0.0';
  config.server.port = 9999;
  assert.equal(gatewayBaseUrl(config, undefined), 'http://127.0.0.1:9999');
});
