import type { AliasName, GatewayConfig, ModelConfig } from '../config/schema.ts';
import type { ReasoningEffort } from '../canonical/chat-request.ts';
import type { AliasRule } from '../storage/records.ts';

export interface AliasEntry {
  name: AliasName;
  candidates: ModelConfig[];
  reasoning: ReasoningEffort;
  /** Where the candidates come from: the console's rules, or the config file. */
  source: 'console' | 'config';
}

export const ALIAS_NAMES: readonly AliasName[] = ['svc/fast', 'svc/balanced', 'svc/best'];

/**
 * Models by id, built once from the config, and aliases: the config file's, each replaced by the
 * console's rule when one is set (applyRules). Readers look the maps up on every request, so a
 * new set of rules takes effect on the next one.
 */
export class ModelCatalog {
  readonly models = new Map<string, ModelConfig>();
  aliases = new Map<string, AliasEntry>();
  private readonly configured: GatewayConfig['aliases'];

  constructor(config: GatewayConfig) {
    for (const model of config.models) this.models.set(model.id, model);
    this.configured = config.aliases;
    this.applyRules([]);
  }

  /** True for an alias or model id the gateway knows. */
  has(model: string): boolean {
    return this.aliases.has(model) || this.models.has(model);
  }

  /** Why `rule` cannot be applied (an unknown alias or model, no or repeated candidates), or null. */
  ruleProblem(rule: Pick<AliasRule, 'alias' | 'candidates' | 'reasoning'>): string | null {
    if (!ALIAS_NAMES.includes(rule.alias as AliasName)) return `alias must be one of ${ALIAS_NAMES.join(', ')}`;
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
    for (const name of ALIAS_NAMES) {
      const rule = byAlias.get(name);
      const source = rule ?? this.configured[name];
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
