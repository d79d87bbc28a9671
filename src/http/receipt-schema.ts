import { z } from 'zod';
import { usdAmount } from '../lib/money-schema.ts';

const pricesPerMillion = z
  .object({ input: usdAmount, cached_input: usdAmount, cache_write: usdAmount, output: usdAmount })
  .strict()
  .describe('USD per 1M tokens, as applied to this request');

const attempt = z
  .object({
    model: z.string(),
    outcome: z.enum(['succeeded', 'failed', 'skipped', 'cancelled']),
    error_code: z.string().nullable(),
    detail: z.string().nullable(),
    latency_ms: z.number().int(),
    step: z.number().int().optional().describe('Fix runs: the step the call belonged to.'),
    cost: usdAmount.optional().describe('Fix runs: what the call cost.'),
  })
  .strict();

/** A receipt as GET /v1/receipts and /v1/receipts/{id} return it. */
export const receiptSchema = z
  .object({
    id: z.string().describe('rcpt_...; also the x-svc-receipt-id header of the request'),
    object: z.literal('receipt'),
    request_id: z.string(),
    created_at: z.string().describe('ISO 8601 with nine fractional digits; pass it as `before` for the next page'),
    status: z.enum(['succeeded', 'failed', 'cancelled']),
    endpoint: z.string().describe('chat.completions, messages, responses, fix.quote or fix.runs'),
    stream: z.boolean(),
    key: z.object({ id: z.string(), prefix: z.string() }).strict(),
    requested_model: z.string().nullable(),
    model: z.string().nullable().describe('The model that answered'),
    attempts: z.array(attempt).describe('Every candidate tried or skipped, in order'),
    warnings: z.array(z.string()),
    usage: z
      .object({
        prompt_tokens: z.number().int(),
        cached_tokens: z.number().int(),
        cache_write_tokens: z.number().int(),
        completion_tokens: z.number().int(),
        reasoning_tokens: z.number().int(),
      })
      .strict()
      .nullable(),
    usage_estimated: z.boolean().describe('The provider never reported usage; the gateway estimated it'),
    prices_per_million_tokens: pricesPerMillion.nullable(),
    hold: usdAmount.describe('The worst case held while the request ran'),
    cost: usdAmount.describe('What was charged'),
    exceeded_hold: z.boolean(),
    latency_ms: z.number().int(),
    time_to_first_token_ms: z.number().int().nullable(),
    error_code: z.string().nullable(),
  })
  .strict();

export const receiptListSchema = z
  .object({
    object: z.literal('list'),
    data: z.array(receiptSchema).describe('Newest first'),
    has_more: z.boolean(),
  })
  .strict();

/** Query digits only: "1e1" or " 5" are refused as before. */
const wholeNumber = (value: unknown) => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value);

/** The query of GET /v1/receipts. */
export const receiptsQuerySchema = z.object({
  limit: z.preprocess(wholeNumber, z.number().int().min(1).max(100)).optional().describe('Page size, 1 to 100 (default 20)'),
  before: z.string().optional().describe("Exclusive: an ISO 8601 timestamp (at most 9 fractional digits), such as the last receipt's created_at"),
});

export type Receipt = z.infer<typeof receiptSchema>;
export type ReceiptList = z.infer<typeof receiptListSchema>;
