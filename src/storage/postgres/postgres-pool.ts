import pg from 'pg';
export { redactedUrl } from '../redacted-url.ts';

const INT8_OID = 20;
const TIMESTAMPTZ_OID = 1184;
const DEFAULT_POOL_MAX = 10;
/** How long a query waits for a connection (a free one from the pool, or a new one) before it fails. */
export const CONNECT_TIMEOUT_MS = 10_000;

/** BIGINT arrives as text; money must stay exact, so anything past 2^53 - 1 is refused, never rounded. */
export function parseSafeInteger(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`database integer ${text} is beyond Number.MAX_SAFE_INTEGER`);
  return value;
}

const parseTimestamp = pg.types.getTypeParser(TIMESTAMPTZ_OID, 'text') as (text: string) => Date;

/** Instants leave the adapter as the ISO strings (with milliseconds) they arrived as. */
function parseInstant(text: string): string {
  return parseTimestamp(text).toISOString();
}

/**
 * Type parsers of this adapter alone: pg.types is process-wide, and other code in the process
 * (or a test) must not find its BIGINTs turned into numbers behind its back.
 */
const gatewayTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (format !== 'binary') {
      if (oid === INT8_OID) return parseSafeInteger;
      if (oid === TIMESTAMPTZ_OID) return parseInstant;
    }
    return pg.types.getTypeParser(oid, format as 'text');
  },
} as pg.CustomTypesConfig;

export interface PoolSettings {
  connectionString: string;
  max: number;
}

/** What a pool's sessions differ in from the URL's: `flushLater` commits without waiting for the WAL flush (synchronous_commit off). */
export interface PoolOptions {
  max?: number;
  flushLater?: boolean;
}

/** Reads and removes our own `pool_max` parameter; the rest of the URL goes to pg as it is. */
export function poolSettings(url: string, options: PoolOptions = {}): PoolSettings {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error('DATABASE_URL is not a valid postgres:// URL');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new Error(`DATABASE_URL must start with postgres:// or postgresql://, got ${parsed.protocol}//`);
  }
  const poolMax = parsed.searchParams.get('pool_max');
  parsed.searchParams.delete('pool_max');
  const max = poolMax === null ? DEFAULT_POOL_MAX : Number(poolMax);
  if (!Number.isSafeInteger(max) || max < 1) throw new Error(`pool_max in DATABASE_URL must be a positive integer, got "${poolMax}"`);
  // pg parses timestamps only in the ISO DateStyle; a server or role default of another style
  // is overridden at connection start (a later -c wins), costing no round trip.
  const settings = options.flushLater ? '-c DateStyle=ISO -c synchronous_commit=off' : '-c DateStyle=ISO';
  const given = parsed.searchParams.get('options');
  parsed.searchParams.set('options', given ? `${given} ${settings}` : settings);
  return { connectionString: parsed.href, max: options.max ?? max };
}

/** A pool on `url`, with this adapter's type parsers. */
export function createPool(url: string, options: PoolOptions = {}): pg.Pool {
  const { connectionString, max } = poolSettings(url, options);
  // A database that does not answer fails the query after CONNECT_TIMEOUT_MS (a retryable error
  // for requests; a clear exit at start) instead of keeping it waiting for good.
  const pool = new pg.Pool({
    connectionString,
    max,
    types: gatewayTypes,
    application_name: 'model-gateway',
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  // An idle connection that breaks (server restart) is dropped by the pool; the next query
  // opens a new one. Without a listener the 'error' event would end the process.
  pool.on('error', () => undefined);
  return pool;
}
