import type { ErrorCode } from '../errors/catalog.ts';
import { toGatewayError } from '../errors/gateway-error.ts';
import { formatUsd } from '../lib/money.ts';
import type { Usage } from '../canonical/chat-result.ts';
import { PromptMeasure } from '../tokens/token-estimate.ts';
import type { FixRunStatus } from '../storage/records.ts';
import { applyEdits } from './edits/apply-edits.ts';
import { checkSyntax } from './edits/check-syntax.ts';
import { parseEdits } from './edits/parse-edits.ts';
import type { SourceFile } from './edits/source-file.ts';
import { writePatch } from './edits/write-patch.ts';
import type { FixAgent } from './fix-agents.ts';
import type { FixInput } from './fix-input.ts';
import { firstStepRequest, retryStepRequest } from './fix-prompt.ts';

/** One model call of a step, as the runner made it through the router. */
export interface StepAnswer {
  model: string;
  text: string;
  usage: Usage;
  costNano: number;
}

/** A step as the API shows it. */
export interface StepView {
  index: number;
  /** The model call the step belongs to (1 to the quote's step_budget): a model step and the check of its reply share it. */
  call: number;
  kind: 'model' | 'check';
  status: 'running' | 'succeeded' | 'failed';
  model: string | null;
  tokens: { input: number; output: number } | null;
  cost_nano: number;
  duration_ms: number | null;
  detail: string | null;
}

/** A step as it starts: nothing measured yet. */
function runningStep(index: number, call: number, kind: StepView['kind']): StepView {
  return { index, call, kind, status: 'running', model: null, tokens: null, cost_nano: 0, duration_ms: null, detail: null };
}

export interface FixOutcome {
  status: Exclude<FixRunStatus, 'running'>;
  /** A git-style diff of the files before and after; null when no edit was applied. */
  patch: string | null;
  files: string[];
  explanation: string;
  error: { code: ErrorCode | string; message: string } | null;
}

/** What the loop needs from the gateway: the money so far, the router, the events. */
export interface FixLoopContext {
  agent: FixAgent;
  input: FixInput;
  stepBudget: number;
  maxCostNano: number;
  /** Actual cost of the calls so far. */
  spentNano(): number;
  /** The most the step's call may cost on the tier's candidates; throws a GatewayError when none can take it. */
  worstCaseOf(prompt: PromptMeasure): Promise<number>;
  /** One model call through the router (fallback included); throws a GatewayError when every candidate failed or the run was cancelled. */
  callModel(prompt: PromptMeasure, stepIndex: number): Promise<StepAnswer>;
  /** Aborted when the run is cancelled or the gateway shuts down. */
  signal: AbortSignal;
  stepStarted(step: StepView): Promise<void>;
  stepEnded(step: StepView): Promise<void>;
}

/** The edits of one reply, applied and checked: the files after them, or the problems to send back. */
interface Attempted {
  files?: SourceFile[];
  touched: string[];
  explanation: string;
  problems: string[];
}

async function attempt(reply: string, input: FixInput): Promise<Attempted> {
  const given = [...input.files, ...input.tests];
  const parsed = parseEdits(
    reply,
    given.map((file) => file.path),
  );
  if (parsed.edits.length === 0) {
    return { touched: [], explanation: parsed.explanation, problems: [...parsed.problems, 'The reply has no edit the gateway could read.'] };
  }
  const applied = applyEdits(given, parsed.edits, { readOnly: new Set(input.tests.map((file) => file.path)) });
  if (!applied.ok) return { touched: [], explanation: parsed.explanation, problems: [...parsed.problems, ...applied.problems] };
  const changed = applied.files.filter((file) => applied.touched.includes(file.path));
  const syntax = (await Promise.all(changed.map((file) => checkSyntax(file)))).flat();
  return { files: applied.files, touched: applied.touched, explanation: parsed.explanation, problems: [...parsed.problems, ...syntax] };
}

/**
 * The agent loop: ask the model for edits, apply and check them locally, and send what went
 * wrong back as the next step's feedback, until a reply applies cleanly and passes the checks,
 * the step budget is spent, or the next call's worst case would pass what is left of the
 * approved maximum. The best result so far is a reply whose edits all applied (its syntax
 * check may have failed).
 */
export async function runFixLoop(context: FixLoopContext): Promise<FixOutcome> {
  const { agent, input } = context;
  let index = 0;
  let previous: { reply: string; problems: string[] } | null = null;
  let best: Attempted | null = null;
  let explanation = '';

  const end = (status: FixOutcome['status'], error: FixOutcome['error']): FixOutcome => ({
    status,
    patch: best?.files ? writePatch([...input.files, ...input.tests], best.files) || null : null,
    files: best?.touched ?? [],
    explanation: best?.explanation || explanation,
    error,
  });

  for (let call = 1; call <= context.stepBudget; call++) {
    if (context.signal.aborted) return end('cancelled', { code: 'request_cancelled', message: 'The run was cancelled.' });
    const request = previous ? await retryStepRequest(agent, input, previous.reply, previous.problems) : firstStepRequest(agent, input);
    // Measured once: the step's worst case and its call (routing, usage estimates) read it.
    const prompt = new PromptMeasure(request);
    let worst: number;
    try {
      worst = await context.worstCaseOf(prompt);
    } catch (error) {
      const failure = toGatewayError(error);
      return end('failed', { code: failure.code, message: `Step ${index + 1} cannot run: ${failure.message}` });
    }
    const left = context.maxCostNano - context.spentNano();
    if (worst > left) {
      return end('cost_cap_reached', {
        code: 'cost_cap_reached',
        message: `The next model call could cost up to $${formatUsd(worst)} and $${formatUsd(Math.max(0, left))} is left of the approved maximum; the run stopped before it.`,
      });
    }

    const modelStep = runningStep(++index, call, 'model');
    await context.stepStarted(modelStep);
    const startedAt = Date.now();
    const spentBefore = context.spentNano();
    let answer: StepAnswer;
    try {
      answer = await context.callModel(prompt, modelStep.index);
    } catch (error) {
      const failure = toGatewayError(error);
      // A call cut short is charged for the prompt it sent: the step shows it, so steps add up to the run's cost.
      const costNano = context.spentNano() - spentBefore;
      await context.stepEnded({ ...modelStep, status: 'failed', cost_nano: costNano, duration_ms: Date.now() - startedAt, detail: failure.message });
      if (failure.code === 'request_cancelled') return end('cancelled', { code: 'request_cancelled', message: 'The run was cancelled.' });
      return end('failed', { code: failure.code, message: failure.message });
    }
    await context.stepEnded({
      ...modelStep,
      status: 'succeeded',
      model: answer.model,
      tokens: { input: answer.usage.inputTokens, output: answer.usage.outputTokens },
      cost_nano: answer.costNano,
      duration_ms: Date.now() - startedAt,
    });

    const checkStep = runningStep(++index, call, 'check');
    await context.stepStarted(checkStep);
    const checkedAt = Date.now();
    const result = await attempt(answer.text, input);
    explanation = result.explanation || explanation;
    if (result.files) best = result;
    const passed = result.files !== undefined && result.problems.length === 0;
    await context.stepEnded({
      ...checkStep,
      status: passed ? 'succeeded' : 'failed',
      duration_ms: Date.now() - checkedAt,
      detail: passed ? `applied to ${result.touched.join(', ')}` : result.problems.join(' '),
    });
    if (passed) return end('succeeded', null);
    previous = { reply: answer.text, problems: result.problems };
  }
  return end('failed', {
    code: 'no_valid_edit',
    message: `No reply within the step budget (${context.stepBudget} model calls) had edits that applied cleanly and passed the checks.`,
  });
}
