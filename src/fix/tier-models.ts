import type { GatewayConfig, ModelConfig, ProviderConfig } from '../config/schema.ts';
import type { ModelCatalog } from '../routing/model-catalog.ts';
import type { ModelHealth } from '../routing/model-health.ts';
import type { FixTier } from '../storage/records.ts';
import { aliasOfTier } from './fix-agents.ts';
import { localProviderAnswers } from './provider-probe.ts';

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

function isLocal(provider: ProviderConfig): boolean {
  try {
    return LOCAL_HOSTS.has(new URL(provider.baseUrl).hostname);
  } catch {
    return false;
  }
}

/** A provider can be called: simulated, given a key, or a server on this host (Ollama, llama.cpp) that needs none and answers. */
async function canCall(provider: ProviderConfig): Promise<boolean> {
  if (provider.kind === 'simulated' || provider.apiKey) return true;
  return isLocal(provider) && (await localProviderAnswers(provider));
}

/** The tier's candidates, in order, whose provider can be called and that are not known to be down. */
export async function connectedCandidates(
  deps: { config: GatewayConfig; catalog: ModelCatalog; health: ModelHealth },
  tier: FixTier,
): Promise<ModelConfig[]> {
  const providers = new Map(deps.config.providers.map((provider) => [provider.id, provider]));
  const candidates = deps.catalog.aliases.get(aliasOfTier(tier))?.candidates ?? [];
  const callable = await Promise.all(candidates.map((model) => canCall(providers.get(model.provider)!)));
  return candidates.filter((model, index) => callable[index] && !deps.health.isDown(model.id));
}
