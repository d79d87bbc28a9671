import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { ZodIssue } from 'zod';
import { configSchema, type GatewayConfig } from './schema.ts';
import { demoConfigText } from './demo-config.ts';
import { interpolateProviders, withoutUnsetProviders, type UnsetProvider } from './provider-variables.ts';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Replace ${NAME} (or ${NAME:-default}) with the environment variable; an unset one (empty counts
 * as unset) is `onUnset`'s text, by default an error naming it.
 */
export function interpolateEnv(text: string, env: NodeJS.ProcessEnv = process.env, onUnset?: (name: string) => string): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_whole, name: string, fallback?: string) => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    if (onUnset) return onUnset(name);
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

/** The whole file interpolated; unset variables in providers' connection fields are collected, not fatal. */
function interpolateConfig(value: unknown, env: NodeJS.ProcessEnv): { raw: unknown; unset: UnsetProvider[] } {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !('providers' in value)) {
    return { raw: interpolateValues(value, env), unset: [] };
  }
  const { providers, unset } = interpolateProviders(
    value.providers,
    (text, onUnset) => interpolateEnv(text, env, onUnset),
    (entry) => interpolateValues(entry, env),
  );
  const raw: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(value)) raw[key] = key === 'providers' ? providers : interpolateValues(entry, env);
  return { raw, unset };
}

function describeIssue(issue: ZodIssue): string {
  const path = issue.path.length ? issue.path.join('.') : '(top level)';
  return `${path}: ${issue.message}`;
}

/** A validated config, and the providers whose connection fields name unset variables. */
export interface LoadedConfig {
  config: GatewayConfig;
  /** The file, or "built-in demo config". */
  source: string;
  /**
   * Providers whose api_key, headers or base_url refer to unset variables. For serving they
   * are dropped from `config` (with their models); otherwise they are kept without those fields.
   */
  unsetProviders: UnsetProvider[];
}

/**
 * Parse and validate config text; errors name every bad field. With `forServing`, providers
 * whose connection fields name unset variables are dropped (see withoutUnsetProviders).
 */
export function parseConfigDetails(text: string, source: string, env: NodeJS.ProcessEnv = process.env, forServing = false): LoadedConfig {
  let interpolated: { raw: unknown; unset: UnsetProvider[] };
  try {
    interpolated = interpolateConfig(parse(text), env);
  } catch (error) {
    if (error instanceof ConfigError) throw new ConfigError(`${source}: ${error.message}`);
    throw new ConfigError(`${source}: not valid YAML: ${(error as Error).message}`);
  }
  const result = configSchema.safeParse(interpolated.raw ?? {});
  if (!result.success) {
    throw new ConfigError(`${source} is not a valid gateway config:\n  ${result.error.issues.map(describeIssue).join('\n  ')}`);
  }
  const { unset } = interpolated;
  if (!forServing) return { config: result.data, source, unsetProviders: unset };
  try {
    return { config: withoutUnsetProviders(result.data, unset), source, unsetProviders: unset };
  } catch (error) {
    throw new ConfigError(`${source}: ${(error as Error).message}`);
  }
}

/** Parse and validate config text (every provider kept; see parseConfigDetails). */
export function parseConfig(text: string, source: string, env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  return parseConfigDetails(text, source, env).config;
}

/**
 * The config from `path`, else GATEWAY_CONFIG, else the built-in demo config (simulated
 * provider, works offline). DATABASE_PATH, PORT and HOST override the file when set.
 * `forServing`: for `start`, providers with unset key variables dropped (parseConfigDetails).
 */
export function loadConfigDetails(path?: string, env: NodeJS.ProcessEnv = process.env, forServing = false): LoadedConfig {
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
  const loaded = parseConfigDetails(text, source, env, forServing);
  const { config } = loaded;
  if (env.DATABASE_PATH) config.database.path = env.DATABASE_PATH;
  if (env.PORT) config.server.port = parsePort(env.PORT, 'PORT');
  if (env.HOST) config.server.host = env.HOST;
  return loaded;
}

/** A TCP port to listen on (0: any free one), from PORT or --port. */
export function parsePort(text: string, name: string): number {
  const port = Number(text.trim());
  if (!/^\d+$/.test(text.trim()) || port > 65535) throw new ConfigError(`${name} must be a port number from 0 to 65535; got "${text}"`);
  return port;
}

/** The config as loadConfigDetails loads it, for commands that never call a provider: every provider kept. */
export function loadConfig(path?: string, env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  return loadConfigDetails(path, env).config;
}
