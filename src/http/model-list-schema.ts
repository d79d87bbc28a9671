import { z } from 'zod';
import { usdAmount } from '../lib/money-schema.ts';

const pricing = {
  unit: z.literal('USD per 1M tokens'),
  input: usdAmount,
  cached_input: usdAmount,
  cache_write: usdAmount,
  output: usdAmount,
};

const priceTier = z
  .object({ above_input_tokens: z.number().int().describe('Every token of a request whose prompt is longer pays these'), ...pricing })
  .omit({ unit: true })
  .strict();

const aliasEntry = z
  .object({
    id: z.string(),
    object: z.literal('model'),
    created: z.number().int(),
    owned_by: z.literal('gateway'),
    type: z.literal('alias'),
    candidates: z.array(z.string()).describe('Model ids tried in order'),
    default_reasoning_effort: z.enum(['low', 'medium', 'xhigh']).optional(),
    pricing: z
      .object({ ...pricing, note: z.string() })
      .strict()
      .describe('The highest price among the candidates, per token kind'),
  })
  .strict();

const modelEntry = z
  .object({
    id: z.string(),
    object: z.literal('model'),
    created: z.number().int(),
    owned_by: z.string().describe('The provider id of the config'),
    type: z.literal('model'),
    pricing: z.object({ ...pricing, tiers: z.array(priceTier).optional().describe('Higher prices for longer prompts, ascending') }).strict(),
    context_window: z.number().int(),
    max_output_tokens: z.number().int(),
    capabilities: z.object({ tools: z.boolean(), vision: z.boolean(), reasoning: z.boolean(), structured_output: z.boolean().optional() }).strict(),
  })
  .strict();

const wildcardEntry = z
  .object({
    id: z.string().describe('<namespace>/*: any <namespace>/<name> is served by the provider as <name>'),
    object: z.literal('model'),
    created: z.number().int(),
    owned_by: z.string().describe('The provider id of the config'),
    type: z.literal('wildcard'),
    description: z.string(),
  })
  .strict();

/** GET /v1/models: the aliases and models the key may use. */
export const modelListSchema = z
  .object({ object: z.literal('list'), data: z.array(z.union([aliasEntry, modelEntry, wildcardEntry])) })
  .strict()
  .describe('OpenAI shape (without an anthropic-version header)');

/** GET /v1/models with an anthropic-version header: Anthropic's shape and paging. */
export const anthropicModelListSchema = z
  .object({
    data: z.array(z.object({ type: z.literal('model'), id: z.string(), display_name: z.string(), created_at: z.string() }).strict()),
    has_more: z.boolean(),
    first_id: z.string().nullable(),
    last_id: z.string().nullable(),
  })
  .strict()
  .describe('Anthropic shape (with an anthropic-version header)');

/** Query of GET /v1/models; only the Anthropic shape pages. */
export const modelListQuerySchema = z.object({
  limit: z
    .preprocess((value) => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value), z.number().int().min(1).max(1000))
    .optional()
    .describe('Anthropic shape only: page size, 1 to 1000 (default 20)'),
  after_id: z.string().optional().describe('Anthropic shape only: the page after this id'),
  before_id: z.string().optional().describe('Anthropic shape only: the page before this id'),
});

export type ModelList = z.infer<typeof modelListSchema>;
export type AnthropicModelList = z.infer<typeof anthropicModelListSchema>;
type AliasEntry = z.infer<typeof aliasEntry>;
type ModelEntry = z.infer<typeof modelEntry>;
type WildcardEntry = z.infer<typeof wildcardEntry>;
export type { AliasEntry, ModelEntry, WildcardEntry };
