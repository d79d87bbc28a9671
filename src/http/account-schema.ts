import { z } from 'zod';
import { usdAmount } from '../lib/money-schema.ts';

/** The account's money (GET /v1/balance and the console's reports). */
export const accountSummarySchema = z.object({
  balance: usdAmount,
  available: usdAmount.describe('Balance minus what is held for requests in flight'),
  holds: z.object({ count: z.number().int(), total: usdAmount }).strict(),
  month: z
    .object({
      period: z.string().describe('YYYY-MM, UTC'),
      spend: usdAmount,
      held: usdAmount,
      budget: usdAmount.nullable().describe('The monthly budget; null when none is set'),
      remaining: usdAmount.nullable(),
    })
    .strict(),
});

/** GET /v1/balance. */
export const balanceSchema = z
  .object({ object: z.literal('balance'), currency: z.literal('USD') })
  .merge(accountSummarySchema)
  .strict();

export type AccountSummaryView = z.infer<typeof accountSummarySchema>;
export type Balance = z.infer<typeof balanceSchema>;
