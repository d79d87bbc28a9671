import { usdPerMillionToNano } from '../lib/money.ts';

/**
 * The decimal a catalog number was written as: its shortest round-trip text (`String(n)`), with
 * an exponent ("1e-7") spelled out in digits. Reading that text, never multiplying the number,
 * keeps 0.075 exactly 0.075 (as a float it is 0.07499999999999999722...).
 */
export function decimalTextOf(value: number): string {
  if (!Number.isFinite(value) || value < 0) throw new Error(`${value} is not a non-negative price`);
  const text = String(value);
  const exponent = /^(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!exponent) return text;
  const digits = exponent[1]! + (exponent[2] ?? '');
  const point = exponent[1]!.length + Number(exponent[3]);
  if (point <= 0) return `0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return digits + '0'.repeat(point - digits.length);
  return `${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** A catalog price in USD per 1M tokens as integer nano-USD per 1M tokens, exactly. */
export function nanoPerMillionOf(usdPerMillion: number): number {
  return usdPerMillionToNano(decimalTextOf(usdPerMillion));
}
