import type { ModelConfig } from '../config/schema.ts';
import type { Usage } from '../canonical/chat-result.ts';
import { costOfParts } from '../lib/money.ts';
import type { AppliedPrices } from '../storage/records.ts';

export function pricesOf(model: ModelConfig): AppliedPrices {
  return { ...model.price };
}

/**
 * Exact cost in nano-USD: uncached input at the input price, cache reads at the cached
 * price, cache writes at the cache-write price, every output token (reasoning included)
 * at the output price. Cached and cache-written tokens are never also billed as input.
 */
export function costOfUsage(usage: Usage, prices: AppliedPrices): number {
  const uncached = Math.max(0, usage.inputTokens - usage.cachedInputTokens - usage.cacheWriteTokens);
  return costOfParts([
    [uncached, prices.inputNanoPerMillion],
    [usage.cachedInputTokens, prices.cachedInputNanoPerMillion],
    [usage.cacheWriteTokens, prices.cacheWriteNanoPerMillion],
    [usage.outputTokens, prices.outputNanoPerMillion],
  ]);
}
