/**
 * Instants as integer nanoseconds since the Unix epoch (BigInt: a JS number loses digits past
 * 2^53 ns, about 104 days), and their ISO 8601 text with nine fractional digits. Receipts are
 * ordered by this value, so a timestamp a client sends back must parse to exactly what was shown.
 */

const NANOS_PER_MILLISECOND = 1_000_000n;

/** Date, then optionally time (minutes, seconds, up to nine fractional digits) and offset; no offset means UTC. */
const ISO_INSTANT = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** Nanoseconds since the epoch of an ISO 8601 instant, or null when `text` is not one (or has more than nine fractional digits). */
export function parseInstantNanos(text: string): bigint | null {
  const match = ISO_INSTANT.exec(text);
  if (!match) return null;
  const [, date, minutes, seconds = '00', fraction = '', offset = 'Z'] = match;
  // Whole seconds through Date.parse, which checks the fields and applies the offset; the fraction is added exactly.
  const milliseconds = Date.parse(minutes === undefined ? `${date}T00:00:00Z` : `${date}T${minutes}:${seconds}${normalOffset(offset)}`);
  if (Number.isNaN(milliseconds)) return null;
  return BigInt(milliseconds) * NANOS_PER_MILLISECOND + BigInt(fraction.padEnd(9, '0') || '0');
}

/** `+0530` as `+05:30`, which every Date.parse accepts. */
function normalOffset(offset: string): string {
  return offset.length === 5 ? `${offset.slice(0, 3)}:${offset.slice(3)}` : offset;
}

/** UTC ISO 8601 with nine fractional digits: `2026-11-24T03:58:21.123456789Z`. */
export function formatInstantNanos(nanos: bigint): string {
  const milliseconds = floorDivide(nanos, NANOS_PER_MILLISECOND);
  const wholeSeconds = new Date(Number(floorDivide(milliseconds, 1_000n) * 1_000n)).toISOString().slice(0, -5);
  const fraction = nanos - floorDivide(nanos, 1_000_000_000n) * 1_000_000_000n;
  return `${wholeSeconds}.${fraction.toString().padStart(9, '0')}Z`;
}

/** Integer division rounding toward minus infinity (BigInt `/` truncates toward zero). */
function floorDivide(dividend: bigint, divisor: bigint): bigint {
  const quotient = dividend / divisor;
  return dividend % divisor < 0n ? quotient - 1n : quotient;
}
