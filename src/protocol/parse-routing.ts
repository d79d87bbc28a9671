import { invalid, isObject, optionalBoolean } from './read-fields.ts';

/** What a client may say about routing, in every wire format: the gateway's own `routing` object. */
export interface ParsedRouting {
  fallback: boolean;
  allowedModels?: string[];
}

/** The gateway's own `routing` object, read the same way on every route. */
export function parseRouting(value: unknown): ParsedRouting {
  if (value === undefined || value === null) return { fallback: true };
  if (!isObject(value)) invalid('routing must be an object');
  const fallback = optionalBoolean(value.fallback, 'routing.fallback') ?? true;
  const allowed = value.allowed_models;
  if (allowed === undefined || allowed === null) return { fallback };
  if (!Array.isArray(allowed) || !allowed.every((entry) => typeof entry === 'string')) {
    invalid('routing.allowed_models must be an array of model ids');
  }
  return { fallback, allowedModels: allowed };
}
