/**
 * Money is integer nano-USD (1e-9 USD) everywhere inside the gateway. A JS number holds
 * integers exactly up to 2^53, i.e. about 9 million USD, far above any balance here;
 * products of tokens and prices are done in BigInt so they never lose a digit.
 */

export const NANO_PER_USD = 1_000_000_000;

/** The most nano-USD a balance may hold (about 9 million USD): every sum of money stays an exact integer. */
export const MAX_BALANCE_NANO = Number.MAX_SAFE_INTEGER;

const decimalPattern = /^(\d+)(?:\.(\d+))?$/;

/** Parse a non-negative USD decimal ("12.5", "0.000000001") into integer nano-USD, refusing anything finer. */
export function parseUsd(text: string): number {
  const match = decimalPattern.exec(text.trim());
  if (!match) throw new Error(`"${text}" is not a non-negative USD amount like 12.50`);
  const whole = match[1]!;
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > 9) throw new Error(`"${text}" is finer than one nano-dollar`);
  const nano = BigInt(whole) * 1_000_000_000n + BigInt(fraction.padEnd(9, '0') || '0');
  if (nano > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`"${text}" is too large`);
  return Number(nano);
}

/** A price in USD per 1M tokens, as integer nano-USD per 1M tokens. */
export const usdPerMillionToNano = parseUsd;

/** Integer nano-USD as a USD decimal string with all nine places ("0.000184500"). */
export function formatUsd(nano: number): string {
  if (!Number.isSafeInteger(nano)) throw new Error(`money must be an integer number of nano-USD, got ${nano}`);
  const sign = nano < 0 ? '-' : '';
  const digits = String(Math.abs(nano)).padStart(10, '0');
  return `${sign}${digits.slice(0, -9)}.${digits.slice(-9)}`;
}

/**
 * Cost in nano-USD of `tokens` at `nanoPerMillion`: the exact product divided by one million,
 * rounded half up. Summing several components first and rounding once is `costOfParts`.
 */
export function costOfParts(parts: ReadonlyArray<readonly [tokens: number, nanoPerMillion: number]>): number {
  let total = 0n;
  for (const [tokens, price] of parts) total += BigInt(tokens) * BigInt(price);
  return Number((total + 500_000n) / 1_000_000n);
}
