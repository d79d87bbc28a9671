import { GatewayError } from '../errors/gateway-error.ts';

/** Readers of request fields shared by every wire format's parser; each failure is invalid_request naming the field. */

export function invalid(message: string): never {
  throw new GatewayError('invalid_request', message);
}

export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export const isAbsent = (value: unknown): value is undefined | null => value === undefined || value === null;

export function optionalNumber(value: unknown, field: string): number | undefined {
  if (isAbsent(value)) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) invalid(`${field} must be a number`);
  return value;
}

export function optionalBoolean(value: unknown, field: string): boolean | undefined {
  if (isAbsent(value)) return undefined;
  if (typeof value !== 'boolean') invalid(`${field} must be a boolean`);
  return value;
}

export function optionalString(value: unknown, field: string): string | undefined {
  if (isAbsent(value)) return undefined;
  if (typeof value !== 'string') invalid(`${field} must be a string`);
  return value;
}

export function positiveInteger(value: unknown, field: string): number | undefined {
  if (isAbsent(value)) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) invalid(`${field} must be a positive integer`);
  return value;
}
