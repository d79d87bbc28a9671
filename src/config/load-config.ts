import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { ZodIssue } from 'zod';
import { configSchema, type GatewayConfig } from './schema.ts';
import { demoConfigText } from './demo-config.ts';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Replace ${NAME} (or ${NAME:-default}) with the environment variable, naming it when it is missing. */
export function interpolateEnv(text: string, env: NodeJS.ProcessEnv = process.env): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_whole, name: string, fallback?: string) => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    throw new ConfigError(`config refers to \${${name}} but the environment variable ${name} is not set`);
  });
}

/** Interpolate every string value after YAML parsing, so comments and env values never change the structure. */
function interpolateValues(value: unknown, env: NodeJS.ProcessEnv): unknown {
  if (typeof value === 'string') return interpolateEnv(value, env);
  if (Array.isArray(value)) return value.map((entry) => interpolateValues(entry, env));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, interpolateValues(entry, env)]));
  }
  return value;
}

function describeIssue(issue: ZodIssue): string {
  const path = issue.path.length ? issue.path.join('.') : '(top level)';
  return `${path}: ${issue.message}`;
}

/** Parse and validate config text; errors name every bad field. */
export function parseConfig(text: string, source: string, env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  let raw: unknown;
  try {
    raw = interpolateValues(parse(text), env);
  } catch (error) {
    if (error instanceof ConfigError) throw new ConfigError(`${source}: ${error.message}`);
    throw new ConfigError(`${source}: not valid YAML: ${(error as Error).message}`);
  }
  const result = configSchema.safeParse(raw ?? {});
  if (!result.success) {
    throw new ConfigError(`${source} is not a valid gateway config:\n  ${result.error.issues.map(describeIssue).join('\n  ')}`);
  }
  return result.data;
}

/**
 * The config from `path`, else GATEWAY_CONFIG, else the built-in demo config (simulated
 * provider, works offline). DATABASE_PATH and PORT override the file when set.
 */
export function loadConfig(path?: string, env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const file = path ?? env.GATEWAY_CONFIG;
  let text: string;
  let source: string;
  if (file) {
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new ConfigError(`cannot read config file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    source = file;
  } else {
    text = demoConfigText;
    source = 'built-in demo config';
  }
  const config = parseConfig(text, source, env);
  if (env.DATABASE_PATH) config.database.path = env.DATABASE_PATH;
  if (env.PORT) config.server.port = Number(env.PORT);
  if (env.HOST) config.server.host = env.HOST;
  return config;
}
