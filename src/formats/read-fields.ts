import { GatewayError } from '../errors/gateway-error.ts';

/** What the wire formats' readers share: their schemas (validate-body.ts) check shapes; these say what a shape cannot. */

/** invalid_request with a message naming the field. */
export function invalid(message: string): never {
  throw new GatewayError('invalid_request', message);
}

export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
