import type { ModelConfig } from '../config/schema.ts';
import type { ChatRequest } from '../protocol/canonical/chat-request.ts';
import { costOfParts } from '../lib/money.ts';
import { estimateInputTokens } from '../protocol/canonical/token-estimate.ts';

/** Output cap sent to a model: what the client asked, else the model's maximum. */
export function outputCapFor(request: ChatRequest, model: ModelConfig): number {
  return Math.min(request.maxOutputTokens ?? model.maxOutputTokens, model.maxOutputTokens);
}

/** Highest cost any candidate could charge for this request, nano-USD. */
export function worstCaseCost(request: ChatRequest, candidates: ModelConfig[]): number {
  let worst = 0;
  for (const model of candidates) {
    const cost = costOfParts([
      [estimateInputTokens(request, model), model.price.inputNanoPerMillion],
      [outputCapFor(request, model), model.price.outputNanoPerMillion],
    ]);
    if (cost > worst) worst = cost;
  }
  return worst;
}
