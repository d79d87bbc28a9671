import type { GatewayConfig, ModelConfig, ProviderConfig } from '../config/schema.ts';
import type { ModelCatalog } from '../routing/model-catalog.ts';
import type { ModelHealth } from '../routing/model-health.ts';
import type { FixTier } from '../storage/records.ts';
import { aliasOfTier } from './fix-agents.ts';

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** A provider can be called: simulated, given a key, or a server on this host (Ollama, llama.cpp) that needs none. */
function hasCredentials(provider: ProviderConfig): boolean {
  if (provider.kind === 'simulated' || provider.apiKey) return true;
  try {
    return LOCAL_HOSTS.has(new URL(provider.baseUrl).hostname);
  } catch {
    return false;
  }
}

/** The tier's candidates, in order, whose provider has its credentials and that are not known to be down. */
export function connectedCandidates(deps: { config: GatewayConfig; catalog: ModelCatalog; health: ModelHealth }, tier: FixTier): ModelConfig[] {
  const providers = new Map(deps.config.providers.map((provider) => [provider.id, provider]));
  const candidates = deps.catalog.aliases.get(aliasOfTier(tier))?.candidates ?? [];
  return candidates.filter((model) => hasCredentials(providers.get(model.provider)!) && !deps.health.isDown(model.id));
}
