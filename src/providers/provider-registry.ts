import type { GatewayConfig, ModelConfig, ProviderConfig } from '../config/schema.ts';
import { createAnthropicProvider } from './anthropic/anthropic-provider.ts';
import { createOpenAICompatibleProvider } from './openai-compatible/openai-compatible-provider.ts';
import type { ProviderAdapter } from './provider.ts';
import { createSimulatedProvider } from './simulated/simulated-provider.ts';

const factories: Record<ProviderConfig['kind'], (config: ProviderConfig) => ProviderAdapter> = {
  openai: createOpenAICompatibleProvider,
  anthropic: createAnthropicProvider,
  simulated: createSimulatedProvider,
};

/** One adapter per configured provider, looked up by model. */
export class ProviderRegistry {
  private readonly adapters = new Map<string, ProviderAdapter>();

  constructor(config: GatewayConfig) {
    for (const provider of config.providers) this.adapters.set(provider.id, factories[provider.kind](provider));
  }

  forModel(model: ModelConfig): ProviderAdapter {
    return this.adapters.get(model.provider)!;
  }

  async close(): Promise<void> {
    await Promise.all([...this.adapters.values()].map((adapter) => adapter.close()));
  }
}
