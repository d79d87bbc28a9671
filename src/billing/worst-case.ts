import type { ModelConfig } from '../config/schema.ts';
import type { ChatRequest } from '../canonical/chat-request.ts';
import { costOfParts } from '../lib/money.ts';
import type { PromptMeasure } from '../tokens/token-estimate.ts';
import type { MeteredRequest } from './request-meter.ts';
import { tierPricesFor } from './price-usage.ts';
import type { AppliedPrices } from '../storage/records.ts';

/** Output cap sent to a model: what the client asked, else the model's maximum. */
export function outputCapFor(request: ChatRequest, model: ModelConfig): number {
  return Math.min(request.maxOutputTokens ?? model.maxOutputTokens, model.maxOutputTokens);
}

/** Highest cost any candidate could charge for this request, nano-USD, from the prompt's bound known now. */
export function worstCaseCost(prompt: PromptMeasure, candidates: ModelConfig[]): number {
  return worstCaseOf(prompt.request, candidates, (model) => prompt.ceiling(model));
}

/**
 * The most a prompt of up to `inputTokens` can pay per token: the dearest of the tiers it can
 * reach, each price on its own (a tier is reached when the prompt passes its size). An input
 * token written to the provider's cache pays the cache-write price (Anthropic: 1.25x input), which
 * any request can do (the gateway's breakpoints, a client's own): with `cacheWrites`, the input
 * price is the dearer of the two.
 */
export function worstPricesFor(model: ModelConfig, inputTokens: number, cacheWrites = true): AppliedPrices {
  const inputOf = (prices: AppliedPrices) =>
    cacheWrites ? Math.max(prices.inputNanoPerMillion, prices.cacheWriteNanoPerMillion) : prices.inputNanoPerMillion;
  if (!model.priceTiers.length) return { ...model.price, inputNanoPerMillion: inputOf(model.price) };
  let input = inputOf(model.price);
  let output = model.price.outputNanoPerMillion;
  for (const tier of model.priceTiers) {
    if (inputTokens <= tier.aboveInputTokens) break;
    input = Math.max(input, inputOf(tier.price));
    output = Math.max(output, tier.price.outputNanoPerMillion);
  }
  const reached = tierPricesFor(model, inputTokens);
  return {
    inputNanoPerMillion: input,
    cachedInputNanoPerMillion: reached.cachedInputNanoPerMillion,
    cacheWriteNanoPerMillion: reached.cacheWriteNanoPerMillion,
    outputNanoPerMillion: output,
  };
}

function worstCaseOf(request: ChatRequest, candidates: ModelConfig[], inputTokens: (model: ModelConfig) => number): number {
  let worst = 0;
  for (const model of candidates) {
    const tokens = inputTokens(model);
    const prices = worstPricesFor(model, tokens);
    const cost = costOfParts([
      [tokens, prices.inputNanoPerMillion],
      [outputCapFor(request, model), prices.outputNanoPerMillion],
    ]);
    if (cost > worst) worst = cost;
  }
  return worst;
}

/**
 * What the request is charged when its process dies after the provider was called and before it
 * settled (orphan-receipt.ts): the input part of the first candidate's worst case, the prompt
 * at the price of the model that answers unless it fails. The output, which nobody received,
 * is not charged. Its input bound is the one the hold used (the bytes, or the count once made).
 */
export function estimatedCallCost(prompt: PromptMeasure, candidates: ModelConfig[]): number {
  const first = candidates[0];
  if (!first) return 0;
  const tokens = prompt.ceiling(first);
  return costOfParts([[tokens, worstPricesFor(first, tokens, false).inputNanoPerMillion]]);
}

/**
 * What a fix run is charged when its process dies mid-run, as a chat request is: its first step's
 * prompt (the quote's counted input) at the first candidate's input price, never above the hold.
 */
export function estimatedFixCallCost(inputTokens: number, candidates: readonly ModelConfig[]): number {
  const first = candidates[0];
  return first ? costOfParts([[inputTokens, worstPricesFor(first, inputTokens, false).inputNanoPerMillion]]) : 0;
}

/**
 * Holds the worst case before any call. The first try bounds the prompt by its UTF-8 bytes,
 * which needs no tokenizer; only when that hold is refused (balance, daily limit or budget) is
 * the prompt counted and the tighter bound tried, so a refusal is decided on the count, or on
 * the prompt's floor when even that leaves the worst case above what is left: no count can.
 */
export async function reserveWorstCase(metered: MeteredRequest, prompt: PromptMeasure, candidates: ModelConfig[]): Promise<void> {
  metered.estimatedCostNano = estimatedCallCost(prompt, candidates);
  await metered.reserve(worstCaseCost(prompt, candidates), async (remainingNano) => {
    const atLeast = new Map(await Promise.all(candidates.map(async (model) => [model, await prompt.ceilingAtLeast(model)] as const)));
    const lowest = worstCaseOf(prompt.request, candidates, (model) => atLeast.get(model)!);
    if (lowest > remainingNano) return lowest;
    await prompt.count(candidates);
    metered.estimatedCostNano = estimatedCallCost(prompt, candidates);
    return worstCaseCost(prompt, candidates);
  });
}
