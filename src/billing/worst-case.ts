import type { ModelConfig } from '../config/schema.ts';
import type { ChatRequest } from '../protocol/canonical/chat-request.ts';
import { costOfParts } from '../lib/money.ts';
import { countInput, inputTokenCeiling } from '../protocol/canonical/token-estimate.ts';
import type { MeteredRequest } from './request-meter.ts';

/** Output cap sent to a model: what the client asked, else the model's maximum. */
export function outputCapFor(request: ChatRequest, model: ModelConfig): number {
  return Math.min(request.maxOutputTokens ?? model.maxOutputTokens, model.maxOutputTokens);
}

/** Highest cost any candidate could charge for this request, nano-USD, from the prompt's bound known now. */
export function worstCaseCost(request: ChatRequest, candidates: ModelConfig[]): number {
  let worst = 0;
  for (const model of candidates) {
    const cost = costOfParts([
      [inputTokenCeiling(request, model), model.price.inputNanoPerMillion],
      [outputCapFor(request, model), model.price.outputNanoPerMillion],
    ]);
    if (cost > worst) worst = cost;
  }
  return worst;
}

/**
 * Holds the worst case before any call. The first try bounds the prompt by its UTF-8 bytes,
 * which needs no tokenizer; only when that hold is refused (balance, daily limit or budget) is
 * the prompt counted and the tighter bound tried, so a refusal is decided on the count.
 */
export async function reserveWorstCase(metered: MeteredRequest, request: ChatRequest, candidates: ModelConfig[]): Promise<void> {
  await metered.reserve(worstCaseCost(request, candidates), async () => {
    await countInput(request);
    return worstCaseCost(request, candidates);
  });
}
