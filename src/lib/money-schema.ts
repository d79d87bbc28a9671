import { z } from 'zod';

/** USD as the API writes it (formatUsd): a decimal string with exactly nine fractional digits, never a float. */
export const usdAmount = z
  .string()
  .regex(/^-?\d+\.\d{9}$/)
  .describe('USD as a decimal string with nine fractional digits (nano-USD exact), e.g. "0.000412000"');
