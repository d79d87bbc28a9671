import { issueApiKey } from '../auth/issue-api-key.ts';
import type { GatewayConfig, ModelConfig } from '../config/schema.ts';
import { ModelCatalog } from '../routing/model-catalog.ts';
import { DEFAULT_ACCOUNT_ID } from '../storage/store.ts';
import { CliError } from './cli-error.ts';
import { report, type CommandContext } from './command-context.ts';
import { claudeCodeEnv, claudeCodeSettingsPath, writeClaudeCodeSettings } from './setup-claude-code.ts';
import { codexConfigLines, codexHome, writeCodexConfig } from './setup-codex.ts';

const DEFAULT_MODEL = 'svc/balanced';

/** What a coding tool is told about the model it calls: the limits it must stay under. */
export interface ToolModel {
  /** The alias or model id the tool sends. */
  id: string;
  /** The models that may answer it: the alias's candidates, or the model itself. */
  candidates: ModelConfig[];
  /** Smallest among the candidates, so the tool never overruns the one that answers. */
  contextWindow: number;
  maxOutputTokens: number;
  /** Every candidate takes images. */
  vision: boolean;
  /** Some candidate reasons. */
  reasoning: boolean;
  /** The alias's default reasoning effort; null for a model id. */
  defaultReasoning: string | null;
}

/** The setup a tool gets: where to call, with which key, on which model. */
export interface ToolSetup {
  baseUrl: string;
  key: string;
  keyId: string;
  keyName: string;
  model: ToolModel;
}

/** The model or alias as it answers now: the console's alias rules apply over the config file's. */
async function resolveModel(context: CommandContext, id: string): Promise<ToolModel> {
  const catalog = new ModelCatalog(context.config);
  catalog.applyRules(await context.store.listAliasRules(DEFAULT_ACCOUNT_ID));
  const alias = catalog.aliases.get(id);
  const model = catalog.models.get(id);
  if (!alias && !model) {
    const known = [...catalog.aliases.keys(), ...catalog.models.keys()];
    throw new CliError(`unknown model "${id}"; choose from: ${known.join(', ')}`);
  }
  const candidates = alias ? alias.candidates : [model!];
  return {
    id,
    candidates,
    contextWindow: Math.min(...candidates.map((candidate) => candidate.contextWindow)),
    maxOutputTokens: Math.min(...candidates.map((candidate) => candidate.maxOutputTokens)),
    vision: candidates.every((candidate) => candidate.capabilities.vision),
    reasoning: candidates.some((candidate) => candidate.capabilities.reasoning),
    defaultReasoning: alias ? alias.reasoning : null,
  };
}

/** `--url`, else the address the config listens on (a wildcard host is reached on loopback). */
export function gatewayBaseUrl(config: GatewayConfig, url: string | undefined): string {
  if (url !== undefined) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new CliError(`--url must be an http(s) URL such as http://127.0.0.1:8787; got "${url}"`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new CliError(`--url must be http or https; got "${url}"`);
    return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '').replace(/\/v1$/, '')}`;
  }
  const host = ['0.0.0.0', '::', ''].includes(config.server.host) ? '127.0.0.1' : config.server.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.server.port}`;
}

/** Checks the options, then mints the tool's own key: inference only, allowed just the model it uses. */
async function prepare(context: CommandContext, tool: string): Promise<ToolSetup> {
  const { options } = context;
  const model = await resolveModel(context, (options.model ?? DEFAULT_MODEL).trim());
  const baseUrl = gatewayBaseUrl(context.config, options.url);
  const { key, record } = await issueApiKey(context.store, {
    name: tool,
    scopes: ['inference'],
    models: [model.id],
    now: context.now,
    actor: 'cli',
  });
  return { baseUrl, key, keyId: record.id, keyName: tool, model };
}

/** The JSON report of a setup: what every tool gets, then the tool's own fields. */
function setupJson(tool: string, setup: ToolSetup, fields: Record<string, unknown>) {
  return { tool, base_url: setup.baseUrl, key: setup.key, key_id: setup.keyId, model: limitsJson(setup.model), ...fields };
}

function limitsJson(model: ToolModel) {
  return {
    id: model.id,
    candidates: model.candidates.map((candidate) => candidate.id),
    context_window: model.contextWindow,
    max_output_tokens: model.maxOutputTokens,
  };
}

function limitsText(setup: ToolSetup): string[] {
  const { model } = setup;
  const source = model.candidates.length > 1 ? ` (smallest among ${model.candidates.map((candidate) => candidate.id).join(', ')})` : '';
  return [
    `Gateway: ${setup.baseUrl}`,
    `Key:     ${setup.keyId} "${setup.keyName}" (inference, allowed ${model.id}); the key is shown once`,
    `Model:   ${model.id}: context window ${model.contextWindow}, output limit ${model.maxOutputTokens} tokens${source}`,
  ];
}

/** `setup claude-code`: the env block Claude Code reads, printed or merged into its settings file. */
export async function setupClaudeCode(context: CommandContext): Promise<void> {
  const { options } = context;
  const scope = options.scope ?? 'user';
  if (scope !== 'user' && scope !== 'project' && scope !== 'local') throw new CliError(`--scope must be user, project or local; got "${scope}"`);
  const path = claudeCodeSettingsPath(scope, process.env, process.cwd());
  const setup = await prepare(context, 'claude-code');
  const env = claudeCodeEnv(setup);
  if (options.write) writeClaudeCodeSettings(path, env);
  report(context, setupJson('claude-code', setup, { env, written: options.write ? path : null }), () => {
    const lines = limitsText(setup);
    const block = Object.entries(env).map(([name, value]) => `  ${name}=${value}`);
    if (options.write) return [...lines, '', `Wrote the env block of ${path}:`, ...block, '', 'Run: claude'].join('\n');
    return [...lines, '', `Put this in the "env" block of ${path} (or run again with --write):`, JSON.stringify({ env }, null, 2)].join('\n');
  });
}

/** `setup codex`: the provider, model and model metadata Codex reads, printed or merged into CODEX_HOME. */
export async function setupCodex(context: CommandContext): Promise<void> {
  const { options } = context;
  const home = codexHome(process.env);
  const form = options['built-in'] ? 'built-in' : 'custom';
  const setup = await prepare(context, 'codex');
  if (options.write) {
    const written = writeCodexConfig(home, setup, process.env, form);
    report(context, setupJson('codex', setup, { provider: form, written }), () =>
      [
        ...limitsText(setup),
        '',
        `Wrote ${written.config}:`,
        ...written.lines.map((line) => `  ${line}`),
        form === 'custom'
          ? `Wrote ${written.env} (MODEL_GATEWAY_API_KEY, which Codex loads from CODEX_HOME/.env)`
          : `Stored the key as Codex's login (${written.env}, codex login --with-api-key), in place of the login it had`,
        written.catalog
          ? `Wrote ${written.catalog} (model metadata: context window ${setup.model.contextWindow}, instructions from Codex's own catalog)`
          : `No model catalog written: ${written.catalogProblem}. Codex will say "Model metadata for \`${setup.model.id}\` not found".`,
        '',
        'Run: codex',
      ].join('\n'),
    );
    return;
  }
  const lines = codexConfigLines(setup, null, form);
  const key =
    form === 'custom'
      ? [`and the key in the environment (or in ${home}/.env):`, `export MODEL_GATEWAY_API_KEY=${setup.key}`]
      : ["and store the key as Codex's login (or set CODEX_API_KEY for codex exec):", `printf '%s' ${setup.key} | codex login --with-api-key`];
  report(context, setupJson('codex', setup, { provider: form, config_toml: lines.join('\n') }), () =>
    [
      ...limitsText(setup),
      '',
      `Put this in ${home}/config.toml:`,
      ...lines,
      '',
      ...key,
      '',
      `Run again with --write to write both, and a model catalog (${home}/model-gateway-models.json) that`,
      `gives Codex the model's metadata so it does not warn "Model metadata for \`${setup.model.id}\` not found".`,
    ].join('\n'),
  );
}
