import { formatUsd } from '../lib/money.ts';
import type { FixQuoteRecord, FixRunEvent, FixRunRecord } from '../storage/records.ts';
import { aliasOfTier } from './fix-agents.ts';
import type { StepView } from './fix-loop.ts';
import type { FixQuoteView, FixRunView, FixStepView } from './fix-schemas.ts';

/** A quote as the API returns it; USD as decimal strings. `coveredSteps`: model calls its maximum covers at their worst case. */
export function renderQuote(quote: FixQuoteRecord, coveredSteps: number): FixQuoteView {
  return {
    object: 'fix.quote',
    id: quote.id,
    agent: quote.agent,
    tier: quote.tier,
    model: aliasOfTier(quote.tier),
    input_tokens: quote.inputTokens,
    estimated_cost: formatUsd(quote.estimatedCostNano),
    max_cost: formatUsd(quote.maxCostNano),
    step_budget: quote.stepBudget,
    covered_steps: coveredSteps,
    created_at: quote.createdAt,
    expires_at: quote.expiresAt,
  };
}

function renderStep(step: StepView): FixStepView {
  return {
    index: step.index,
    // Steps recorded before they carried their call: a model step and its check, in turn.
    call: step.call ?? Math.ceil(step.index / 2),
    kind: step.kind,
    status: step.status,
    model: step.model,
    tokens: step.tokens,
    duration_ms: step.duration_ms,
    detail: step.detail,
    cost: formatUsd(step.cost_nano),
  };
}

/** The steps so far, from a run's events: each as it ended, or as it started while it runs. */
function stepsOf(events: FixRunEvent[]): StepView[] {
  const steps = new Map<number, StepView>();
  for (const event of events) {
    if (event.type === 'step.started' || event.type === 'step.completed') {
      const step = event.data.step as StepView;
      steps.set(step.index, step);
    }
  }
  return [...steps.values()].sort((a, b) => a.index - b.index);
}

interface StoredResult {
  patch?: string | null;
  files?: string[];
  explanation?: string;
  error?: { code: string; message: string } | null;
  cost_nano?: number;
}

/** A run as the API returns it: status, the result once it ended, every step, cost so far. */
export function renderRun(run: FixRunRecord, events: FixRunEvent[]): FixRunView {
  const result = (run.result ?? {}) as StoredResult;
  const steps = stepsOf(events);
  const spent = steps.reduce((sum, step) => sum + step.cost_nano, 0);
  return {
    object: 'fix.run',
    id: run.id,
    quote: run.quoteId,
    agent: run.agent,
    tier: run.tier,
    status: run.status,
    created_at: run.createdAt,
    finished_at: run.finishedAt,
    receipt_id: run.receiptId,
    patch: result.patch ?? null,
    files: result.files ?? [],
    explanation: result.explanation ?? null,
    error: result.error ?? null,
    steps: steps.map(renderStep),
    cost: formatUsd(result.cost_nano ?? Math.min(spent, run.maxCostNano)),
    max_cost: formatUsd(run.maxCostNano),
  };
}

/** One event as a server-sent event payload; `run.completed` carries the whole run. */
export function renderEvent(event: FixRunEvent, completed?: FixRunView) {
  const base = { type: event.type, sequence: event.sequence, run_id: event.runId, at: event.at };
  if (event.type === 'run.completed' && completed) return { ...base, run: completed };
  if (event.data.step) return { ...base, step: renderStep(event.data.step as StepView) };
  return { ...base, ...event.data };
}
