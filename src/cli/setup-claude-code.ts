import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { CliError } from './cli-error.ts';
import type { ToolSetup } from './setup-commands.ts';

export type ClaudeCodeScope = 'user' | 'project' | 'local';

/**
 * Where Claude Code reads settings: user ones in CLAUDE_CONFIG_DIR (default ~/.claude), project
 * ones in .claude/settings.json of the directory it runs in, local ones (not committed) beside them.
 */
export function claudeCodeSettingsPath(scope: ClaudeCodeScope, env: NodeJS.ProcessEnv, cwd: string): string {
  if (scope === 'project') return join(cwd, '.claude', 'settings.json');
  if (scope === 'local') return join(cwd, '.claude', 'settings.local.json');
  return join(env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), '.claude'), 'settings.json');
}

/**
 * The variables Claude Code reads for a gateway. Every model tier (the main model, opus, sonnet,
 * haiku and the small fast model of background tasks) is the chosen one, the only one the key
 * allows. Claude Code takes a model it does not know for one with 200k tokens of context, or 1M
 * when it sends the 1M-context beta; CLAUDE_CODE_MAX_CONTEXT_TOKENS is what it uses instead for a
 * model whose name does not start with "claude-" once CLAUDE_CODE_DISABLE_1M_CONTEXT is set.
 */
export function claudeCodeEnv(setup: ToolSetup): Record<string, string> {
  const model = setup.model.id;
  return {
    ANTHROPIC_BASE_URL: setup.baseUrl,
    // Bearer: a key Claude Code was not given by its own login needs no approval prompt this way.
    ANTHROPIC_AUTH_TOKEN: setup.key,
    ANTHROPIC_MODEL: model,
    ANTHROPIC_DEFAULT_OPUS_MODEL: model,
    ANTHROPIC_DEFAULT_SONNET_MODEL: model,
    ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
    ANTHROPIC_SMALL_FAST_MODEL: model,
    CLAUDE_CODE_SUBAGENT_MODEL: model,
    CLAUDE_CODE_MAX_CONTEXT_TOKENS: String(setup.model.contextWindow),
    CLAUDE_CODE_DISABLE_1M_CONTEXT: '1',
    CLAUDE_CODE_MAX_OUTPUT_TOKENS: String(setup.model.maxOutputTokens),
  };
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readSettings(path: string): JsonObject {
  if (!existsSync(path)) return {};
  const text = readFileSync(path, 'utf8');
  if (text.trim() === '') return {};
  let settings: unknown;
  try {
    settings = JSON.parse(text);
  } catch (error) {
    throw new CliError(`${path} is not valid JSON (${(error as Error).message}); fix it or move it away, then run again`);
  }
  if (!isObject(settings)) throw new CliError(`${path} must hold a JSON object`);
  if (settings.env !== undefined && !isObject(settings.env)) throw new CliError(`"env" in ${path} must be an object`);
  return settings;
}

/**
 * Merges `env` into the settings file's env block, keeping every other setting and variable.
 * ANTHROPIC_API_KEY goes: Claude Code would send it beside the gateway key. The file holds a key,
 * so a new one is readable by its owner only.
 */
export function writeClaudeCodeSettings(path: string, env: Record<string, string>): void {
  const settings = readSettings(path);
  const merged: JsonObject = { ...(settings.env as JsonObject | undefined) };
  delete merged.ANTHROPIC_API_KEY;
  for (const [name, value] of Object.entries(env)) merged[name] = value;
  settings.env = merged;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
}
