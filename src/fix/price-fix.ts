import { outputCapFor } from '../billing/worst-case.ts';
import { INPUT_MARGIN, PromptMeasure, type InputFit } from '../tokens/token-estimate.ts';
import type { ModelConfig } from '../config/schema.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { costOfParts, formatUsd } from '../lib/money.ts';
import type { ChatRequest } from '../canonical/chat-request.ts';
import { FEEDBACK_TOKENS, STEP_OUTPUT_TOKENS } from './fix-prompt.ts';

/** Framing of the two messages a later step adds (the previous reply and the feedback). */
const LATER_STEP_FRAMING = 16;
/** A typical edit reply: a few search/replace blocks and a paragraph. */
export const TYPICAL_REPLY_TOKENS = 1_000;
/** A typical input: a couple of source files and a test output. */
export const TYPICAL_INPUT_TOKENS = 4_000;

export interface FixPrice {
  /** Fair cl100k count of the first step's prompt. */
  inputTokens: number;
  /** One step with a typical reply, on the first candidate that fits. */
  estimatedCostNano: number;
  /** The worst case of every step the budget allows, on the dearest candidate that fits. */
  maxCostNano: number;
  /** The worst case of the first step: a maximum below it could never run. */
  firstStepNano: number;
  /** Candidates whose context holds every step. */
  candidates: ModelConfig[];
}

/** Tokens a later step adds to the first one's prompt at most: the previous reply and the feedback. */
function laterStepExtra(model: ModelConfig): number {
  return outputCap(model) + FEEDBACK_TOKENS + LATER_STEP_FRAMING;
}

function outputCap(model: ModelConfig): number {
  return Math.min(STEP_OUTPUT_TOKENS, model.maxOutputTokens);
}

/** Largest first-step prompt (fair tokens) `model` can run `steps` steps of. */
function inputRoom(model: ModelConfig, steps: number): number {
  return model.contextWindow - outputCap(model) - (steps > 1 ? laterStepExtra(model) : 0);
}

function stepCost(model: ModelConfig, inputTokens: number): number {
  return costOfParts([
    [inputTokens, model.price.inputNanoPerMillion],
    [outputCap(model), model.price.outputNanoPerMillion],
  ]);
}

/**
 * Prices a fix on a tier's connected candidates. Each step is priced at its worst case: the
 * first step's prompt bound (the same bound a chat hold uses) and a full reply; a later step adds
 * the previous reply and the feedback to it. Input that no candidate can hold for every step is
 * context_too_large, saying how much fits.
 */
export async function priceFix(candidates: ModelConfig[], first: ChatRequest, steps: number): Promise<FixPrice> {
  const prompt = new PromptMeasure(first);
  const fit: ModelConfig[] = [];
  let unfit: InputFit | undefined;
  for (const model of candidates) {
    const check = await prompt.fits(model, inputRoom(model, steps));
    if (check.fits) fit.push(model);
    else unfit ??= check;
  }
  if (fit.length === 0) {
    const room = Math.max(...candidates.map((model) => inputRoom(model, steps)));
    throw new GatewayError(
      'context_too_large',
      `The input counts ${unfit!.bound ? 'at least' : 'about'} ${unfit!.tokens} tokens; this tier fits at most ${Math.max(0, room)} for a run of ${steps} step${steps === 1 ? '' : 's'}. ` +
        'Send fewer or shorter files (the end of the output is enough), fewer steps, or a tier with a larger context.',
    );
  }
  const inputTokens = await prompt.fairCount(candidates[0]!);
  let firstStepNano = 0;
  let laterStepNano = 0;
  for (const model of fit) {
    const bound = await prompt.estimate(model);
    firstStepNano = Math.max(firstStepNano, stepCost(model, bound));
    laterStepNano = Math.max(laterStepNano, stepCost(model, bound + Math.ceil(laterStepExtra(model) * INPUT_MARGIN)));
  }
  const cheapest = fit[0]!;
  return {
    inputTokens,
    estimatedCostNano: costOfParts([
      [await prompt.fairCount(cheapest), cheapest.price.inputNanoPerMillion],
      [Math.min(TYPICAL_REPLY_TOKENS, outputCapFor(first, cheapest)), cheapest.price.outputNanoPerMillion],
    ]),
    maxCostNano: firstStepNano + (steps - 1) * laterStepNano,
    firstStepNano,
    candidates: fit,
  };
}

/** The quote's maximum: the computed worst case, or the client's lower cap when it allows one step. */
export function approvedMaximum(price: FixPrice, askedNano: number | undefined): number {
  if (askedNano === undefined) return price.maxCostNano;
  if (askedNano < price.firstStepNano) {
    throw new GatewayError(
      'invalid_request',
      `max_cost: $${formatUsd(askedNano)} is below the worst case of one step on this tier ($${formatUsd(price.firstStepNano)}).`,
    );
  }
  return Math.min(askedNano, price.maxCostNano);
}

/** A tier's price range for GET /v1/fix/agents: a typical run, and the largest input it accepts at the full step budget. */
export function tierPriceRange(candidates: ModelConfig[], steps: number): { typicalNano: number; largestNano: number; maxInputTokens: number } {
  const first = candidates[0]!;
  let largestNano = 0;
  let maxInputTokens = 0;
  for (const model of candidates) {
    const room = Math.max(0, inputRoom(model, steps));
    maxInputTokens = Math.max(maxInputTokens, room);
    largestNano = Math.max(largestNano, stepCost(model, room) + (steps - 1) * stepCost(model, room + laterStepExtra(model)));
  }
  return {
    typicalNano: costOfParts([
      [TYPICAL_INPUT_TOKENS, first.price.inputNanoPerMillion],
      [TYPICAL_REPLY_TOKENS, first.price.outputNanoPerMillion],
    ]),
    largestNano,
    maxInputTokens,
  };
}
