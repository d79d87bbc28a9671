import { z } from 'zod';
import { usdAmount } from '../lib/money-schema.ts';
import type { FixTier } from '../storage/records.ts';
import { FIX_TIERS } from './fix-agents.ts';

/** The API's shapes of fix agents, quotes, runs and their events; the renderers are typed by them. */

const tier = z.enum(FIX_TIERS as [FixTier, ...FixTier[]]);

export const fixAgentListSchema = z
  .object({
    object: z.literal('list'),
    data: z.array(
      z
        .object({
          object: z.literal('fix.agent'),
          id: z.string(),
          name: z.string(),
          description: z.string(),
          input: z.record(z.string()).describe('The fields of a quote request this agent reads, with what each holds'),
          default_steps: z.number().int(),
          tiers: z.array(
            z
              .object({
                tier,
                model: z.string().describe('The alias that serves the tier'),
                connected: z.boolean().describe('Whether a model of the tier can be called now'),
                connected_models: z.array(z.string()),
                allowed_for_key: z.boolean(),
                price: z
                  .object({
                    smallest: usdAmount.describe('No quote of the tier costs less (estimated or maximum)'),
                    typical: usdAmount.describe('A typical run: a few files and a test output, one model call'),
                    largest: usdAmount.describe("No quote at the agent's default step budget has a larger max_cost"),
                    largest_any_steps: usdAmount.describe('No quote at any max_steps (up to 8) has a larger max_cost'),
                  })
                  .strict()
                  .describe('Bounds of every quote the tier gives on its connected models'),
                max_input_tokens: z.number().int().describe('The largest input a run at the default step budget accepts'),
              })
              .strict(),
          ),
        })
        .strict(),
    ),
  })
  .strict();

export const fixQuoteSchema = z
  .object({
    object: z.literal('fix.quote'),
    id: z.string().describe('quote_...; run it with POST /v1/fix/runs'),
    agent: z.string(),
    tier,
    model: z.string(),
    input_tokens: z.number().int(),
    estimated_cost: usdAmount,
    max_cost: usdAmount.describe('Held while the run goes; never charged more'),
    step_budget: z.number().int().describe('Model calls the run may make; each is followed by a check step (steps[].call numbers them)'),
    covered_steps: z
      .number()
      .int()
      .describe(
        'Model calls max_cost covers at their worst case; a call past them runs only when the earlier ones cost less than their worst case (else the run ends cost_cap_reached)',
      ),
    created_at: z.string(),
    expires_at: z.string().describe('5 minutes after created_at'),
  })
  .strict();

export const fixStepSchema = z
  .object({
    index: z.number().int().describe('1, 2, ... over model and check steps together'),
    call: z.number().int().describe('The model call the step belongs to (1 to step_budget): a model step and the check of its reply'),
    kind: z.enum(['model', 'check']),
    status: z.enum(['running', 'succeeded', 'failed']),
    model: z.string().nullable(),
    tokens: z.object({ input: z.number().int(), output: z.number().int() }).strict().nullable(),
    duration_ms: z.number().nullable(),
    detail: z.string().nullable(),
    cost: usdAmount,
  })
  .strict();

export const fixRunSchema = z
  .object({
    object: z.literal('fix.run'),
    id: z.string(),
    quote: z.string(),
    agent: z.string(),
    tier,
    status: z.enum(['running', 'succeeded', 'failed', 'cost_cap_reached', 'cancelled']),
    created_at: z.string(),
    finished_at: z.string().nullable(),
    receipt_id: z.string(),
    patch: z.string().nullable().describe('A git-style diff of the files changed; null when no edit was applied'),
    files: z.array(z.string()),
    explanation: z.string().nullable(),
    error: z.object({ code: z.string(), message: z.string() }).strict().nullable(),
    steps: z.array(fixStepSchema),
    cost: usdAmount,
    max_cost: usdAmount,
  })
  .strict();

/** The data of one server-sent event of a run; `id:` is its sequence (resume with Last-Event-ID). */
export const fixRunEventSchema = z
  .object({
    type: z.enum(['run.started', 'step.started', 'step.completed', 'run.completed']),
    sequence: z.number().int(),
    run_id: z.string(),
    at: z.string(),
    status: z.string().optional().describe('run.started, and run.completed when the run is not attached'),
    step: fixStepSchema.optional().describe('step.started and step.completed'),
    run: fixRunSchema.optional().describe('run.completed: the whole run'),
  })
  .passthrough();

/** The query of GET /v1/fix/runs/{id}/events; the Last-Event-ID header says the same when there is no `after`. */
export const fixRunEventsQuerySchema = z.object({
  after: z
    .preprocess(
      (value) => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value),
      z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    )
    .optional()
    .describe('Events after this sequence (default 0: from the start)'),
});

/** The body of POST /v1/fix/runs. */
export const fixRunRequestSchema = z
  .object({
    quote: z.string().min(1).describe('The id of a quote from POST /v1/fix/quote'),
    stream: z.boolean().optional().describe('true: server-sent events per step instead of the finished run'),
  })
  .strict();

export type FixAgentList = z.infer<typeof fixAgentListSchema>;
export type FixQuoteView = z.infer<typeof fixQuoteSchema>;
export type FixRunView = z.infer<typeof fixRunSchema>;
export type FixStepView = z.infer<typeof fixStepSchema>;
