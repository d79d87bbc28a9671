import { array, boolean, nullable, object, string, type Infer } from '../lib/wire-schema.ts';

/** What a client may say about routing, in every wire format: the gateway's own `routing` object. */
export interface ParsedRouting {
  fallback: boolean;
  allowedModels?: string[];
}

/** The gateway's own `routing` field of a chat, messages or responses body; other fields inside it are ignored. */
export const routingSchema = nullable(
  object(
    {},
    {
      fallback: nullable(boolean({ description: 'false: try only the first candidate of an alias (default true).' })),
      allowed_models: nullable(
        array(string(), {
          description: 'Model ids this request may be answered by; candidates not listed are skipped (recorded on the receipt).',
          message: 'must be an array of model ids',
        }),
      ),
    },
    { description: "The gateway's own routing options.", message: 'must be an object' },
  ),
);

/** The gateway's own `routing` object, as its body schema let it through, read the same way on every route. */
export function parseRouting(value: Infer<typeof routingSchema> | undefined): ParsedRouting {
  const fallback = value?.fallback ?? true;
  const allowed = value?.allowed_models;
  return allowed === undefined || allowed === null ? { fallback } : { fallback, allowedModels: allowed };
}
