import type { GatewayConfig } from './schema.ts';

/** A provider whose api_key, headers or base_url refers to environment variables that are not set. */
export interface UnsetProvider {
  provider: string;
  variables: string[];
}

/** Interpolates one string; `onUnset` gives the text for a variable that is not set (or throws). */
export type Interpolate = (text: string, onUnset?: (name: string) => string) => string;

/** Where a provider with an unset base_url points while it is kept: a name that never resolves. */
export const UNSET_BASE_URL = 'http://unset.invalid';

/** Fields of a provider entry that may name a secret or a host only the serving machine has. */
const CONNECTION_FIELDS = new Set(['api_key', 'base_url', 'headers']);

/**
 * Interpolates the YAML `providers` entries. An unset variable in a connection field (api_key,
 * headers, base_url) is recorded instead of stopping the load: the provider is kept with that
 * field left out (base_url pointing nowhere), which commands that never call a provider do not
 * notice. Every other field goes through `interpolateValue`, strict as the rest of the file.
 */
export function interpolateProviders(
  providers: unknown,
  interpolate: Interpolate,
  interpolateValue: (value: unknown) => unknown,
): { providers: unknown; unset: UnsetProvider[] } {
  if (!Array.isArray(providers)) return { providers: interpolateValue(providers), unset: [] };
  const unset: UnsetProvider[] = [];
  const resolved = providers.map((entry: unknown) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return interpolateValue(entry);
    const missing: string[] = [];
    const lenient = (text: string) => {
      const before = missing.length;
      const value = interpolate(text, (name) => {
        if (!missing.includes(name)) missing.push(name);
        return '';
      });
      return missing.length === before ? value : undefined;
    };
    const result: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(entry as Record<string, unknown>)) {
      if (!CONNECTION_FIELDS.has(field)) result[field] = interpolateValue(value);
      else if (field === 'headers' && typeof value === 'object' && value !== null && !Array.isArray(value)) {
        const headers: Record<string, unknown> = {};
        for (const [name, header] of Object.entries(value)) {
          const text = typeof header === 'string' ? lenient(header) : header;
          if (text !== undefined) headers[name] = text;
        }
        result[field] = headers;
      } else if (typeof value === 'string') {
        const text = lenient(value);
        if (text !== undefined) result[field] = text;
        else if (field === 'base_url') result[field] = UNSET_BASE_URL;
      } else result[field] = interpolateValue(value);
    }
    const id = (entry as { id?: unknown }).id;
    if (missing.length) unset.push({ provider: typeof id === 'string' ? id : '(no id)', variables: missing });
    return result;
  });
  return { providers: resolved, unset };
}

function listVariables(variables: string[]): string {
  return variables.join(' and ');
}

/**
 * The config a server runs with: providers in `unset` dropped, with their models and those
 * models' places in aliases. Throws (one line) when an alias would be left with no candidate.
 */
export function withoutUnsetProviders(config: GatewayConfig, unset: readonly UnsetProvider[]): GatewayConfig {
  if (!unset.length) return config;
  const variablesOf = new Map(unset.map((entry) => [entry.provider, entry.variables]));
  const dropped = new Map<string, string[]>();
  for (const model of config.models) {
    const variables = variablesOf.get(model.provider);
    if (variables) dropped.set(model.id, variables);
  }
  const aliases = config.aliases as Record<string, { candidates: string[] }>;
  for (const [name, alias] of Object.entries(aliases)) {
    const kept = alias.candidates.filter((candidate) => !dropped.has(candidate));
    if (kept.length) {
      alias.candidates = kept;
      continue;
    }
    const needs = alias.candidates.map((candidate) => `${candidate} needs ${listVariables(dropped.get(candidate)!)}`).join('; ');
    const only = alias.candidates.length === 1 ? 'its only candidate' : 'every candidate';
    throw new Error(`alias ${name} has no candidate left: ${only} is on a provider whose key is not set (${needs})`);
  }
  config.providers = config.providers.filter((provider) => !variablesOf.has(provider.id));
  config.models = config.models.filter((model) => !dropped.has(model.id));
  return config;
}

/** The warning a server logs for a provider it skips. */
export function skippedProviderMessage(entry: UnsetProvider): string {
  const plural = entry.variables.length > 1;
  return `provider ${entry.provider} skipped: ${listVariables(entry.variables)} ${plural ? 'are' : 'is'} not set (its models are left out)`;
}
