/**
 * The console's one money rule. Amounts arrive as USD decimal strings with up to nine places
 * ("13234.500000000", "-0.000184500") and are never put through floating point:
 * - summaries (usd): two decimals, rounded half away from zero, thousands separators
 *   ($13,234.50); a non-zero amount under half a cent reads "<$0.01" rather than a false $0.00;
 *   negative amounts start with a minus sign (−$5.00);
 * - detail (usdExact): every digit the gateway gave, zeros trimmed down to two decimals
 *   ($0.0001845), shown on receipts and on hover over any summary (Money).
 */
const MINUS = '\u2212';

/** A USD decimal string as integer nano-dollars (BigInt: exact at any size). */
export function nanoBig(amount: string): bigint {
  const negative = amount.trim().startsWith('-');
  const [whole = '0', fraction = ''] = amount.trim().replace(/^[-+]/, '').split('.');
  const nano = BigInt(whole || '0') * 1_000_000_000n + BigInt(fraction.padEnd(9, '0').slice(0, 9) || '0');
  return negative ? -nano : nano;
}

function grouped(whole: bigint): string {
  return whole.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Summary form: $13,234.50, −$5.00, <$0.01. */
export function usd(amount: string | null | undefined): string {
  if (amount === null || amount === undefined) return '—';
  const nano = nanoBig(amount);
  const negative = nano < 0n;
  const size = negative ? -nano : nano;
  const cents = (size + 5_000_000n) / 10_000_000n;
  if (cents === 0n && size > 0n) return `${negative ? MINUS : ''}<$0.01`;
  const text = `$${grouped(cents / 100n)}.${(cents % 100n).toString().padStart(2, '0')}`;
  return negative && cents > 0n ? `${MINUS}${text}` : text;
}

/** Detail form: every digit, trailing zeros trimmed down to two decimals: $0.0001845, $13,234.50. */
export function usdExact(amount: string | null | undefined): string {
  if (amount === null || amount === undefined) return '—';
  const nano = nanoBig(amount);
  const negative = nano < 0n;
  const size = negative ? -nano : nano;
  let fraction = (size % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  if (fraction.length < 2) fraction = fraction.padEnd(2, '0');
  return `${negative ? MINUS : ''}$${grouped(size / 1_000_000_000n)}.${fraction}`;
}

/** Integer nano-dollars of a USD decimal string, for chart geometry (exact below 2^53 nano, about $9M). */
export function nanoOf(amount: string): number {
  return Number(nanoBig(amount));
}

/** Integer nano-dollars in summary form, for a chart axis or tooltip. */
export function usdOfNano(nano: number): string {
  return usd(nanoString(BigInt(Math.round(nano))));
}

/**
 * An axis or tooltip amount of a chart: the summary form, except below a cent, where the summary
 * would read "<$0.01" on every tick: there, two significant digits ($0.00018).
 */
export function usdAxis(nano: number): string {
  const size = Math.abs(Math.round(nano));
  if (size === 0 || size >= 10_000_000) return usdOfNano(nano);
  const digits = String(size).length;
  const step = 10 ** Math.max(0, digits - 2);
  return usdExact(nanoString(BigInt(Math.round(nano / step) * step)));
}

/** Integer nano-dollars as the gateway's USD decimal string. */
export function nanoString(nano: bigint): string {
  const negative = nano < 0n;
  const size = negative ? -nano : nano;
  return `${negative ? '-' : ''}${size / 1_000_000_000n}.${(size % 1_000_000_000n).toString().padStart(9, '0')}`;
}

export function shortAddress(address: string): string {
  return `${address.slice(0, 6)}…${address.slice(-4)}`;
}

/** An instant as people read it, in UTC and saying so: 2026-12-02 13:31:24 UTC. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const text = new Date(iso).toISOString();
  return `${text.slice(0, 10)} ${text.slice(11, 19)} UTC`;
}

/** A datetime-local input's value read as UTC (the console's inputs all say UTC), as an ISO instant. */
export function utcInput(value: string): string {
  return new Date(`${value.length === 16 ? `${value}:00` : value}Z`).toISOString();
}

/** An ISO instant as a datetime-local input's value, in UTC. */
export function utcInputValue(iso: string | null | undefined): string {
  return iso ? new Date(iso).toISOString().slice(0, 16) : '';
}

/** What a key without its own rate limit gets: 0 in the config means no limit at all. */
export function defaultRateText(perMinute: number): string {
  return perMinute === 0
    ? 'Keys without their own rate limit are not rate-limited (the default, limits.default_rate_limit_per_minute, is 0: off).'
    : `Keys without their own rate limit get the default of ${perMinute.toLocaleString('en-US')} requests per minute.`;
}
