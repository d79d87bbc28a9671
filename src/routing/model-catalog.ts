import type { AliasName, GatewayConfig, ModelConfig } from '../config/schema.ts';
import type { ReasoningEffort } from '../protocol/canonical/chat-request.ts';

export interface AliasEntry {
  name: AliasName;
  candidates: ModelConfig[];
  reasoning: ReasoningEffort;
}

/** Models and aliases by id, built once from the config. */
export class ModelCatalog {
  readonly models = new Map<string, ModelConfig>();
  readonly aliases = new Map<string, AliasEntry>();

  constructor(config: GatewayConfig) {
    for (const model of config.models) this.models.set(model.id, model);
    for (const [name, alias] of Object.entries(config.aliases) as [AliasName, GatewayConfig['aliases'][AliasName]][]) {
      this.aliases.set(name, {
        name,
        reasoning: alias.reasoning,
        candidates: alias.candidates.map((id) => this.models.get(id)!),
      });
    }
  }

  /** True for an alias or model id the gateway knows. */
  has(model: string): boolean {
    return this.aliases.has(model) || this.models.has(model);
  }
}
