import { z } from 'zod';
import { invalid } from './read-fields.ts';

/** What a client may say about routing, in every wire format: the gateway's own `routing` object. */
export interface ParsedRouting {
  fallback: boolean;
  allowedModels?: string[];
}

/** The gateway's own `routing` field of a chat, messages or responses body; other fields inside it are ignored. */
export const routingSchema = z
  .object({
    fallback: z.boolean().nullish().describe('false: try only the first candidate of an alias (default true).'),
    allowed_models: z
      .array(z.string())
      .nullish()
      .describe('Model ids this request may be answered by; candidates not listed are skipped (recorded on the receipt).'),
  })
  .passthrough()
  .describe("The gateway's own routing options.");

/** The message of the first problem, naming the field as the contract's errors always have. */
function messageOf(issue: z.ZodIssue): string {
  if (issue.path[0] === 'fallback') return 'routing.fallback must be a boolean';
  if (issue.path[0] === 'allowed_models') return 'routing.allowed_models must be an array of model ids';
  return 'routing must be an object';
}

/** The gateway's own `routing` object, read the same way on every route. */
export function parseRouting(value: unknown): ParsedRouting {
  if (value === undefined || value === null) return { fallback: true };
  const parsed = routingSchema.safeParse(value);
  if (!parsed.success) invalid(messageOf(parsed.error.issues[0]!));
  const fallback = parsed.data.fallback ?? true;
  const allowed = parsed.data.allowed_models;
  return allowed === undefined || allowed === null ? { fallback } : { fallback, allowedModels: allowed };
}
