import type { GatewayConfig, ModelConfig } from '../config/schema.ts';
import type { ReasoningEffort } from '../canonical/chat-request.ts';
import type { AliasRule } from '../storage/records.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { nearestName } from '../lib/nearest-name.ts';
import { resolveWildcard, wildcardFor, type ModelRule, type WildcardModel } from '../catalog/configured-models.ts';

export interface AliasEntry {
  name: string;
  candidates: ModelConfig[];
  reasoning: ReasoningEffort;
  /** Where the candidates come from: the console's rules, or the config file. */
  source: 'console' | 'config';
}

/** What a requested name is served as, and the names a key's allow-list may allow it by. */
export interface RouteTarget {
  alias?: AliasEntry;
  model?: ModelConfig;
  /** The name sent, then the rule's target and the wildcard entry it came through, if any. */
  names: string[];
}

/** Most models a wildcard entry resolves and keeps (each from the catalog, so bounded by it anyway). */
const MAX_WILDCARD_MODELS = 2_000;

/**
 * Models by id, built once from the config, and aliases: the config file's, each replaced by the
 * console's rule when one is set (applyRules). Readers look the maps up on every request, so a
 * new set of rules takes effect on the next one. A name that is neither goes through the
 * config's model-name rules, then its wildcard entry (`openai/*`).
 */
export class ModelCatalog {
  readonly models = new Map<string, ModelConfig>();
  aliases = new Map<string, AliasEntry>();
  readonly wildcards: readonly WildcardModel[];
  readonly rules: readonly ModelRule[];
  /** Models resolved through a wildcard entry, as they were first asked for. */
  private readonly resolved = new Map<string, ModelConfig>();
  private readonly configured: GatewayConfig['aliases'];

  constructor(config: Pick<GatewayConfig, 'models' | 'aliases' | 'wildcards' | 'modelRules'>) {
    for (const model of config.models) this.models.set(model.id, model);
    this.configured = config.aliases;
    this.wildcards = config.wildcards;
    this.rules = config.modelRules;
    this.applyRules([]);
  }

  /** True for an alias or model id the gateway knows. */
  has(model: string): boolean {
    return this.aliases.has(model) || this.models.has(model);
  }

  /** Aliases, model ids and wildcard ids: what a mistyped name is compared with. */
  knownNames(): string[] {
    return [...this.aliases.keys(), ...this.models.keys(), ...this.wildcards.map((wildcard) => wildcard.id)];
  }

  /**
   * The model `id` names: a configured one, or one its wildcard entry allows and the catalog
   * prices; undefined when no entry covers it. Throws unsupported_model when one does but the
   * catalog knows no price.
   */
  findModel(id: string): ModelConfig | undefined {
    const model = this.models.get(id) ?? this.resolved.get(id);
    if (model) return model;
    const wildcard = wildcardFor(this.wildcards, id);
    if (!wildcard) return undefined;
    const resolution = resolveWildcard(wildcard, id);
    if ('problem' in resolution)
      throw new GatewayError('unsupported_model', `model "${id}" cannot be served: ${resolution.problem.replace(/; set its price.*$/, '')}`);
    if (this.resolved.size < MAX_WILDCARD_MODELS) this.resolved.set(id, resolution.model);
    return resolution.model;
  }

  /**
   * What `requested` is served as: an alias or model id as it is, else the first model-name rule
   * it matches, else its wildcard entry. Throws unsupported_model, with the nearest known name.
   */
  route(requested: string): RouteTarget {
    const alias = this.aliases.get(requested);
    if (alias) return { alias, names: [requested] };
    const model = this.models.get(requested);
    if (model) return { model, names: this.withWildcard([requested], requested) };
    const rule = this.rules.find((entry) => entry.pattern.test(requested));
    const name = rule ? rule.to : requested;
    const ruled = rule ? this.aliases.get(name) : undefined;
    if (ruled) return { alias: ruled, names: [requested, name] };
    const found = this.findModel(name);
    if (found) return { model: found, names: this.withWildcard(rule ? [requested, name] : [requested], name) };
    const suggestion = nearestName(requested, this.knownNames());
    throw new GatewayError(
      'unsupported_model',
      `model "${requested}" is neither an alias nor a model id listed by GET /v1/models${suggestion ? `; did you mean "${suggestion}"?` : ''}`,
    );
  }

  /** `names`, and the id of the wildcard entry that covers model `id` if one does: a key allowing openai/* allows every openai/ model. */
  private withWildcard(names: string[], id: string): string[] {
    const wildcard = this.wildcards.length ? wildcardFor(this.wildcards, id) : undefined;
    if (wildcard) names.push(wildcard.id);
    return names;
  }

  /** Why `rule` cannot be applied (an unknown alias or model, no or repeated candidates), or null. */
  ruleProblem(rule: Pick<AliasRule, 'alias' | 'candidates' | 'reasoning'>): string | null {
    if (!this.configured[rule.alias]) return `alias must be one of ${Object.keys(this.configured).join(', ')}`;
    if (rule.candidates.length === 0) return 'candidates must name at least one model';
    const unknown = rule.candidates.filter((id) => !this.models.has(id));
    if (unknown.length) return `unknown models: ${unknown.join(', ')}`;
    if (new Set(rule.candidates).size !== rule.candidates.length) return 'a model is listed twice';
    if (!['low', 'medium', 'xhigh'].includes(rule.reasoning)) return 'reasoning must be low, medium or xhigh';
    return null;
  }

  /** The config's aliases, each replaced by its console rule; a rule naming a model no longer configured is ignored. */
  applyRules(rules: readonly AliasRule[]): void {
    const byAlias = new Map(rules.filter((rule) => this.ruleProblem(rule) === null).map((rule) => [rule.alias, rule]));
    const aliases = new Map<string, AliasEntry>();
    for (const [name, configured] of Object.entries(this.configured)) {
      const rule = byAlias.get(name);
      const source = rule ?? configured;
      aliases.set(name, {
        name,
        reasoning: source.reasoning,
        candidates: source.candidates.map((id) => this.models.get(id)!),
        source: rule ? 'console' : 'config',
      });
    }
    this.aliases = aliases;
  }
}
