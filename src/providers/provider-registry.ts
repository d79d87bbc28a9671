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

/**
 * One adapter per configured provider, looked up by model. A reloaded config brings a registry of
 * its own: the one it replaces is retired, and closes once the last request using it (`use`) ends.
 */
export class ProviderRegistry {
  private readonly adapters = new Map<string, ProviderAdapter>();
  private users = 0;
  private retired = false;
  private closing: Promise<void> | null = null;

  constructor(config: GatewayConfig) {
    for (const provider of config.providers) this.adapters.set(provider.id, factories[provider.kind](provider));
  }

  forModel(model: ModelConfig): ProviderAdapter {
    return this.adapters.get(model.provider)!;
  }

  /** A request or fix call is using the registry until the returned function is called. */
  use(): () => void {
    this.users++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (--this.users === 0 && this.retired) void this.close();
    };
  }

  /** No new request will use it: it closes once the ones using it have ended. */
  retire(): void {
    this.retired = true;
    if (this.users === 0) void this.close();
  }

  /** Closes every adapter; provider calls in progress finish first. */
  close(): Promise<void> {
    return (this.closing ??= Promise.all([...this.adapters.values()].map((adapter) => adapter.close())).then(() => undefined));
  }
}
