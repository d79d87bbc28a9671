import type { ModelConfig } from '../config/schema.ts';
import type { Usage } from '../canonical/chat-result.ts';
import { costOfParts } from '../lib/money.ts';
import type { AppliedPrices } from '../storage/records.ts';

/**
 * The prices a call pays whose prompt is `inputTokens` long (every input token: uncached, cache
 * read and cache written): the highest tier it passes, as the provider bills every token of
 * such a request at that tier's prices (Anthropic's and Gemini's past 200k input tokens).
 */
export function tierPricesFor(model: ModelConfig, inputTokens: number): AppliedPrices {
  let price = model.price;
  for (const tier of model.priceTiers) if (inputTokens > tier.aboveInputTokens) price = tier.price;
  return price;
}

/** The prices `usage` was billed at (the base prices when there is none yet). */
export function pricesOf(model: ModelConfig, usage?: Usage): AppliedPrices {
  return usage ? tierPricesFor(model, usage.inputTokens) : model.price;
}

/**
 * Exact cost in nano-USD of one call: uncached input at the input price, cache reads at the
 * cached price, cache writes at the cache-write price, every output token (reasoning included)
 * at the output price, all at the tier the prompt reached. Cached and cache-written tokens are
 * never also billed as input.
 */
export function costOfCall(model: ModelConfig, usage: Usage): number {
  return costOfUsage(usage, pricesOf(model, usage));
}

/** Exact cost in nano-USD of `usage` at `prices`. */
export function costOfUsage(usage: Usage, prices: AppliedPrices): number {
  const uncached = Math.max(0, usage.inputTokens - usage.cachedInputTokens - usage.cacheWriteTokens);
  return costOfParts([
    [uncached, prices.inputNanoPerMillion],
    [usage.cachedInputTokens, prices.cachedInputNanoPerMillion],
    [usage.cacheWriteTokens, prices.cacheWriteNanoPerMillion],
    [usage.outputTokens, prices.outputNanoPerMillion],
  ]);
}
