import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ToolModel, ToolSetup } from './setup-commands.ts';

/** The id of the gateway's entry under `model_providers`, and its key's variable. */
export const CODEX_PROVIDER_ID = 'model-gateway';
export const CODEX_KEY_VARIABLE = 'MODEL_GATEWAY_API_KEY';
const CATALOG_FILE = 'model-gateway-models.json';

/** Codex's own directory: CODEX_HOME, default ~/.codex. */
export function codexHome(env: NodeJS.ProcessEnv): string {
  return env.CODEX_HOME || join(env.HOME || homedir(), '.codex');
}

const tomlString = (value: string) => JSON.stringify(value);

/**
 * Which of Codex's providers calls the gateway: a custom one of its own (`model_providers`, HTTP),
 * or Codex's built-in OpenAI provider at the gateway's address (`openai_base_url`: the Responses
 * WebSocket and remote compaction, the key from Codex's stored login).
 */
export type CodexProviderForm = 'custom' | 'built-in';

/** The top-level settings this command owns: dropped, then written again for the form chosen. */
const TOP_LEVEL_KEYS = ['model', 'model_provider', 'openai_base_url', 'model_context_window', 'model_catalog_json'];

function topLevelLines(setup: ToolSetup, catalogPath: string | null, form: CodexProviderForm): string[] {
  const lines = [
    `model = ${tomlString(setup.model.id)}`,
    form === 'custom' ? `model_provider = ${tomlString(CODEX_PROVIDER_ID)}` : `openai_base_url = ${tomlString(`${setup.baseUrl}/v1`)}`,
    `model_context_window = ${setup.model.contextWindow}`,
  ];
  if (catalogPath !== null) lines.push(`model_catalog_json = ${tomlString(catalogPath)}`);
  return lines;
}

function providerLines(setup: ToolSetup, form: CodexProviderForm): string[] {
  if (form === 'built-in') return [];
  return [
    `[model_providers.${CODEX_PROVIDER_ID}]`,
    `name = ${tomlString(CODEX_PROVIDER_ID)}`,
    `base_url = ${tomlString(`${setup.baseUrl}/v1`)}`,
    `env_key = ${tomlString(CODEX_KEY_VARIABLE)}`,
    'wire_api = "responses"',
  ];
}

/** What config.toml gets, top-level settings first, then the provider's table (custom form). */
export function codexConfigLines(setup: ToolSetup, catalogPath: string | null, form: CodexProviderForm = 'custom'): string[] {
  const table = providerLines(setup, form);
  return table.length ? [...topLevelLines(setup, catalogPath, form), '', ...table] : topLevelLines(setup, catalogPath, form);
}

const TABLE_HEADER = /^\s*\[/;
const OUR_TABLE = new RegExp(`^\\s*\\[\\s*model_providers\\s*\\.\\s*"?${CODEX_PROVIDER_ID}"?\\s*\\]\\s*(#.*)?$`);

/**
 * `text` with this command's settings replaced and the rest kept line for line: top-level keys
 * of ours are dropped and written again at the end of the top-level part (TOML puts every key
 * after a table header into that table), and our provider table is dropped and appended.
 */
export function mergeCodexToml(text: string, setup: ToolSetup, catalogPath: string | null, form: CodexProviderForm = 'custom'): string {
  const lines = text === '' ? [] : text.replace(/\r\n/g, '\n').replace(/\n$/, '').split('\n');
  const firstTable = lines.findIndex((line) => TABLE_HEADER.test(line));
  const top = firstTable === -1 ? lines : lines.slice(0, firstTable);
  const tables = firstTable === -1 ? [] : lines.slice(firstTable);
  const ownKey = new RegExp(`^\\s*(${TOP_LEVEL_KEYS.join('|')})\\s*=`);
  const keptTop = top.filter((line) => !ownKey.test(line));
  while (keptTop.length && keptTop.at(-1)!.trim() === '') keptTop.pop();

  const keptTables: string[] = [];
  let inOurTable = false;
  for (const line of tables) {
    if (TABLE_HEADER.test(line)) inOurTable = OUR_TABLE.test(line);
    if (!inOurTable) keptTables.push(line);
  }
  while (keptTables.length && keptTables.at(-1)!.trim() === '') keptTables.pop();

  const out = [...keptTop, ...topLevelLines(setup, catalogPath, form), ''];
  if (keptTables.length) out.push(...keptTables, '');
  out.push(...providerLines(setup, form));
  while (out.at(-1) === '') out.pop();
  return `${out.join('\n')}\n`;
}

/** `text` of a .env file with the key's variable set and every other line kept. */
export function mergeDotenv(text: string, key: string): string {
  const assignment = new RegExp(`^\\s*(export\\s+)?${CODEX_KEY_VARIABLE}\\s*=`);
  const lines = text.split('\n').filter((line) => line !== '' && !assignment.test(line));
  return `${[...lines, `${CODEX_KEY_VARIABLE}=${key}`].join('\n')}\n`;
}

type CatalogEntry = Record<string, unknown>;

const REASONING_LEVELS = ['low', 'medium', 'high', 'xhigh'];

/**
 * Codex reads a model's metadata from its catalog; a model missing there draws "Model metadata
 * for ... not found" and a generic 272k-token fallback. A catalog entry must carry the model's
 * instructions (its system prompt), which only Codex has: the entry is Codex's own first listed
 * API model with the standard tool set, as `codex debug models --bundled` prints it for this
 * Codex version, with what the gateway knows put in (name, limits, images, reasoning).
 */
export function codexCatalogEntry(template: CatalogEntry, model: ToolModel): CatalogEntry {
  const entry: CatalogEntry = { ...template };
  delete entry.auto_compact_token_limit;
  delete entry.default_service_tier;
  const templateLevels = Array.isArray(template.supported_reasoning_levels) ? (template.supported_reasoning_levels as CatalogEntry[]) : [];
  const levels = REASONING_LEVELS.map(
    (effort) => templateLevels.find((level) => level.effort === effort) ?? { effort, description: `${effort} reasoning effort` },
  );
  Object.assign(entry, {
    slug: model.id,
    display_name: model.id,
    description: `Through model-gateway: ${model.candidates.map((candidate) => candidate.id).join(', ')}`,
    context_window: model.contextWindow,
    max_context_window: model.contextWindow,
    input_modalities: model.vision ? ['text', 'image'] : ['text'],
    supported_reasoning_levels: model.reasoning ? levels : [],
    default_reasoning_level: model.reasoning ? (model.defaultReasoning ?? 'medium') : null,
    supports_reasoning_summaries: model.reasoning,
    visibility: 'list',
    supported_in_api: true,
    priority: 0,
    upgrade: null,
    availability_nux: null,
    service_tiers: [],
    additional_speed_tiers: [],
  });
  return entry;
}

/** Codex's bundled catalog entry to start from: its first listed API model with the standard tool set. */
export function pickCodexTemplate(models: CatalogEntry[]): CatalogEntry | undefined {
  const listed = [...models]
    .sort((a, b) => Number(a.priority ?? 0) - Number(b.priority ?? 0))
    .filter((model) => model.visibility === 'list' && model.supported_in_api !== false);
  return listed.find((model) => model.tool_mode === null || model.tool_mode === undefined) ?? listed[0];
}

function bundledCatalog(env: NodeJS.ProcessEnv, home: string): CatalogEntry[] {
  const output = execFileSync('codex', ['debug', 'models', '--bundled'], {
    env: { ...env, CODEX_HOME: home },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  const parsed = JSON.parse(output) as { models?: CatalogEntry[] };
  if (!Array.isArray(parsed.models)) throw new Error('its catalog has no "models" list');
  return parsed.models;
}

export interface CodexWritten {
  config: string;
  /** Where the key went: CODEX_HOME/.env (custom form), or Codex's stored login (built-in form). */
  env: string;
  catalog: string | null;
  catalogProblem: string | null;
  lines: string[];
}

/**
 * The key as Codex's stored login, the only place its built-in provider reads one from besides
 * CODEX_API_KEY in the environment of `codex exec` (Codex loads no CODEX_ variable from .env).
 */
function storeCodexLogin(home: string, key: string, env: NodeJS.ProcessEnv): string {
  execFileSync('codex', ['login', '--with-api-key'], {
    env: { ...env, CODEX_HOME: home },
    input: key,
    stdio: ['pipe', 'ignore', 'pipe'],
    timeout: 60_000,
  });
  return join(home, 'auth.json');
}

/** Writes the model catalog (when Codex can give its template), config.toml and the key into CODEX_HOME. */
export function writeCodexConfig(home: string, setup: ToolSetup, env: NodeJS.ProcessEnv, form: CodexProviderForm = 'custom'): CodexWritten {
  mkdirSync(home, { recursive: true });
  let catalog: string | null = join(home, CATALOG_FILE);
  let catalogProblem: string | null = null;
  try {
    const template = pickCodexTemplate(bundledCatalog(env, home));
    if (!template) throw new Error('its bundled catalog lists no model');
    writeFileSync(catalog, `${JSON.stringify({ models: [codexCatalogEntry(template, setup.model)] }, null, 2)}\n`);
  } catch (error) {
    catalogProblem = `"codex debug models --bundled" failed (${(error as Error).message.split('\n')[0]}); is Codex on PATH?`;
    catalog = null;
  }
  const config = join(home, 'config.toml');
  const before = existsSync(config) ? readFileSync(config, 'utf8') : '';
  writeFileSync(config, mergeCodexToml(before, setup, catalog, form));
  const lines = codexConfigLines(setup, catalog, form);
  if (form === 'built-in') return { config, env: storeCodexLogin(home, setup.key, env), catalog, catalogProblem, lines };
  const dotenv = join(home, '.env');
  writeFileSync(dotenv, mergeDotenv(existsSync(dotenv) ? readFileSync(dotenv, 'utf8') : '', setup.key), { mode: 0o600 });
  return { config, env: dotenv, catalog, catalogProblem, lines };
}
