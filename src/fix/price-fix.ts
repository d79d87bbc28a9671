import { outputCapFor } from '../billing/worst-case.ts';
import { INPUT_MARGIN, PromptMeasure, type InputFit } from '../tokens/token-estimate.ts';
import type { ModelConfig } from '../config/schema.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { costOfParts, formatUsd } from '../lib/money.ts';
import type { ChatRequest } from '../canonical/chat-request.ts';
import { MAX_STEPS } from './fix-agents.ts';
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
  /** The worst case of each later step. */
  laterStepNano: number;
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

/** The worst case of a step's prompt given its first step's bound: the first step itself, and a later one. */
function stepWorstCases(model: ModelConfig, firstBound: number): { first: number; later: number } {
  return { first: stepCost(model, firstBound), later: stepCost(model, firstBound + Math.ceil(laterStepExtra(model) * INPUT_MARGIN)) };
}

/** A run's worst case: the dearest first step, and the dearest later step for every step after it. */
function runWorstCase(first: number, later: number, steps: number): number {
  return first + (steps - 1) * later;
}

/**
 * Prices a fix on a tier's connected candidates. Each step is priced at its worst case: the
 * first step's prompt bound (the same bound a chat hold uses) and a full reply; a later step adds
 * the previous reply and the feedback to it. Input that no candidate can hold for every step is
 * context_too_large, saying for each candidate how much the input counts and how much it holds.
 */
export async function priceFix(candidates: ModelConfig[], first: ChatRequest, steps: number): Promise<FixPrice> {
  const prompt = new PromptMeasure(first);
  const fit: ModelConfig[] = [];
  const unfit: Array<{ model: ModelConfig; check: InputFit }> = [];
  for (const model of candidates) {
    const check = await prompt.fits(model, inputRoom(model, steps));
    if (check.fits) fit.push(model);
    else unfit.push({ model, check });
  }
  if (fit.length === 0) {
    const each = unfit.map(({ model, check }) => {
      const counted = `${check.bound ? 'at least ' : ''}${check.tokens}`;
      return `${model.id} holds at most ${Math.max(0, inputRoom(model, steps))} tokens of input and the input counts ${counted} there`;
    });
    throw new GatewayError(
      'context_too_large',
      `The input does not fit any model of this tier for a run of ${steps} step${steps === 1 ? '' : 's'}: ${each.join('; ')}. ` +
        'Send fewer or shorter files (the end of the output is enough), fewer steps, or a tier with a larger context.',
    );
  }
  const inputTokens = await prompt.fairCount(candidates[0]!);
  let firstStepNano = 0;
  let laterStepNano = 0;
  for (const model of fit) {
    const worst = stepWorstCases(model, await prompt.estimate(model));
    firstStepNano = Math.max(firstStepNano, worst.first);
    laterStepNano = Math.max(laterStepNano, worst.later);
  }
  const cheapest = fit[0]!;
  return {
    inputTokens,
    estimatedCostNano: costOfParts([
      [await prompt.fairCount(cheapest), cheapest.price.inputNanoPerMillion],
      [Math.min(TYPICAL_REPLY_TOKENS, outputCapFor(first, cheapest)), cheapest.price.outputNanoPerMillion],
    ]),
    maxCostNano: runWorstCase(firstStepNano, laterStepNano, steps),
    firstStepNano,
    laterStepNano,
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
      {},
      'max_cost',
    );
  }
  return Math.min(askedNano, price.maxCostNano);
}

/** How many model calls `maxCostNano` covers at their worst case, of the `steps` asked. */
export function coveredSteps(price: FixPrice, maxCostNano: number, steps: number): number {
  let covered = 1;
  while (covered < steps && runWorstCase(price.firstStepNano, price.laterStepNano, covered + 1) <= maxCostNano) covered++;
  return covered;
}

export interface TierPriceRange {
  /** No quote's estimated or maximum cost is below it. */
  smallestNano: number;
  /** A typical run: a typical input and reply, one step, on the first candidate. */
  typicalNano: number;
  /** The largest maximum a quote at `steps` model calls can have. */
  largestNano: number;
  /** The largest maximum any quote can have, at any step budget. */
  largestAnyStepsNano: number;
  /** The largest input (fair tokens) a run of `steps` steps accepts. */
  maxInputTokens: number;
}

/** The largest maximum a quote of `steps` can have on these candidates: every prompt that fits is bounded by its room times the margin. */
function largestQuote(candidates: readonly ModelConfig[], steps: number): number {
  let first = 0;
  let later = 0;
  for (const model of candidates) {
    const room = inputRoom(model, steps);
    if (room <= 0) continue;
    // A prompt that fits counts at most `room`; its bound (estimate) is at most that times the margin.
    const worst = stepWorstCases(model, Math.ceil(room * INPUT_MARGIN));
    first = Math.max(first, worst.first);
    later = Math.max(later, worst.later);
  }
  return runWorstCase(first, later, steps);
}

/**
 * A tier's price range for GET /v1/fix/agents, bounds that hold every quote the tier gives on
 * the same candidates: no quote's cost is below `smallestNano`, and none at `steps` model calls
 * (at any step budget) has a maximum above `largestNano` (`largestAnyStepsNano`).
 * `minimalPromptTokens` is the fair count of what every first step's prompt holds (its system
 * prompt and framing).
 */
export function tierPriceRange(candidates: ModelConfig[], steps: number, minimalPromptTokens: number): TierPriceRange {
  const first = candidates[0]!;
  let maxInputTokens = 0;
  let smallestNano = Number.MAX_SAFE_INTEGER;
  for (const model of candidates) {
    maxInputTokens = Math.max(maxInputTokens, inputRoom(model, steps));
    // The least estimate this model can give, were it the first that fits (no maximum is below the estimate).
    smallestNano = Math.min(
      smallestNano,
      costOfParts([
        [minimalPromptTokens, model.price.inputNanoPerMillion],
        [Math.min(TYPICAL_REPLY_TOKENS, outputCap(model)), model.price.outputNanoPerMillion],
      ]),
    );
  }
  let largestAnyStepsNano = 0;
  for (let count = 1; count <= MAX_STEPS; count++) largestAnyStepsNano = Math.max(largestAnyStepsNano, largestQuote(candidates, count));
  return {
    smallestNano,
    typicalNano: costOfParts([
      [TYPICAL_INPUT_TOKENS, first.price.inputNanoPerMillion],
      [TYPICAL_REPLY_TOKENS, first.price.outputNanoPerMillion],
    ]),
    largestNano: largestQuote(candidates, steps),
    largestAnyStepsNano,
    maxInputTokens: Math.max(0, maxInputTokens),
  };
}
