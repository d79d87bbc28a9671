import { resolveModel, type ModelConfig, type ModelEntry, type ProviderCatalog, type Resolution } from './resolve-model.ts';

/** `<namespace>/*`: any upstream model of one provider, resolved from the catalog when first asked for. */
export interface WildcardModel {
  id: string;
  /** The id without its `*`, e.g. `openai/`. */
  namespace: string;
  entry: ModelEntry;
  provider: ProviderCatalog;
}

/** A model-name rule, its glob compiled. */
export interface ModelRule {
  match: string;
  to: string;
  pattern: RegExp;
}

interface Issue {
  path: (string | number)[];
  message: string;
}

/** A glob (`*` any characters, `?` one) as an anchored expression; a name without either matches only itself. */
export function globPattern(glob: string): RegExp {
  const source = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`);
}

/** The wildcard entry whose namespace `id` is in, the longest first. */
export function wildcardFor(wildcards: readonly WildcardModel[], id: string): WildcardModel | undefined {
  let best: WildcardModel | undefined;
  for (const wildcard of wildcards) {
    if (id.length > wildcard.namespace.length && id.startsWith(wildcard.namespace) && (!best || wildcard.namespace.length > best.namespace.length)) {
      best = wildcard;
    }
  }
  return best;
}

/** `id` (e.g. openai/gpt-4.1-nano) as its wildcard's provider serves it: upstream gpt-4.1-nano, priced by the catalog. */
export function resolveWildcard(wildcard: WildcardModel, id: string): Resolution {
  const entry: ModelEntry = {
    id,
    provider: wildcard.entry.provider,
    upstream: id.slice(wildcard.namespace.length),
    max_image_tokens: wildcard.entry.max_image_tokens,
    capabilities: wildcard.entry.capabilities,
  };
  if (wildcard.entry.context_window !== undefined) entry.context_window = wildcard.entry.context_window;
  if (wildcard.entry.max_output_tokens !== undefined) entry.max_output_tokens = wildcard.entry.max_output_tokens;
  return resolveModel(entry, wildcard.provider);
}

/**
 * Every configured model resolved against the catalog, the wildcard entries kept for request
 * time, and the models alias candidates and rule targets name through a wildcard resolved now,
 * so a name that cannot be served stops the start, naming it.
 */
export function resolveConfiguredModels(
  providers: ReadonlyArray<{ id: string } & ProviderCatalog>,
  entries: readonly ModelEntry[],
  aliases: Record<string, { candidates: string[] }>,
  rules: ReadonlyArray<{ match: string; to: string }>,
): { models: ModelConfig[]; wildcards: WildcardModel[]; rules: ModelRule[]; warnings: string[]; issues: Issue[] } {
  const byId = new Map(providers.map((provider) => [provider.id, provider]));
  const models = new Map<string, ModelConfig>();
  const wildcards: WildcardModel[] = [];
  const warnings: string[] = [];
  const issues: Issue[] = [];
  entries.forEach((entry, index) => {
    const provider = byId.get(entry.provider);
    if (!provider) return;
    if (entry.id.endsWith('/*')) {
      wildcards.push({ id: entry.id, namespace: entry.id.slice(0, -1), entry, provider });
      return;
    }
    const resolution = resolveModel(entry, provider);
    if ('problem' in resolution) issues.push({ path: ['models', index], message: resolution.problem });
    else {
      models.set(entry.id, resolution.model);
      warnings.push(...resolution.warnings);
    }
  });
  /** A named model: configured, or resolved through its wildcard now; else why not. */
  const known = (id: string): string | null => {
    if (models.has(id) || aliases[id]) return null;
    const wildcard = wildcardFor(wildcards, id);
    if (!wildcard) return `unknown model ${id}`;
    const resolution = resolveWildcard(wildcard, id);
    if ('problem' in resolution) return resolution.problem;
    models.set(id, resolution.model);
    return null;
  };
  for (const [name, entry] of Object.entries(aliases)) {
    entry.candidates.forEach((candidate, index) => {
      const problem = aliases[candidate] ? `${candidate} is an alias, not a model` : known(candidate);
      if (problem) issues.push({ path: ['aliases', name, 'candidates', index], message: problem });
    });
  }
  const compiled = rules.map((rule, index) => {
    const problem = known(rule.to);
    if (problem) issues.push({ path: ['model_rules', index, 'to'], message: problem.replace(/^unknown model/, 'neither an alias nor a model:') });
    return { match: rule.match, to: rule.to, pattern: globPattern(rule.match) };
  });
  return { models: [...models.values()], wildcards, rules: compiled, warnings, issues };
}
