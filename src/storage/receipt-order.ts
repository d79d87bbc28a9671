import { parseInstantNanos } from '../lib/instant-nanos.ts';

/**
 * Receipts of an account are ordered by `created_ns`: nanoseconds since the epoch, unique per
 * account (a unique index on both backends). A receipt asks for its `createdAt` (milliseconds
 * today) and gets the first value above every receipt of the account already in that
 * millisecond, so receipts of one millisecond are ordered as they were written and `created_at`,
 * rendered from `created_ns`, tells them apart. Written concurrently (PostgreSQL), the loser of a
 * tie finds the value taken on insert and looks again a little past it (a random step, so that
 * several losers do not race again for one value): no row lock, only the unique index.
 */

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const NANOS_PER_MILLISECOND = 1_000_000n;

/** The instant as a created_ns bound: an ISO 8601 instant (RangeError when not one), clamped to what a 64-bit column holds. */
export function instantNanos(iso: string): bigint {
  const nanos = parseInstantNanos(iso);
  if (nanos === null) throw new RangeError(`not an ISO 8601 instant: ${JSON.stringify(iso)}`);
  return nanos < INT64_MIN ? INT64_MIN : nanos > INT64_MAX ? INT64_MAX : nanos;
}

/** The first value of the millisecond after the one `nanos` falls in: a free value is looked for below it. */
export function millisecondEnd(nanos: bigint): bigint {
  const remainder = ((nanos % NANOS_PER_MILLISECOND) + NANOS_PER_MILLISECOND) % NANOS_PER_MILLISECOND;
  return nanos - remainder + NANOS_PER_MILLISECOND;
}
