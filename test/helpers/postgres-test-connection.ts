import { test } from 'node:test';
import pg from 'pg';
import { redactedUrl } from '../../src/storage/postgres/postgres-pool.ts';
import { servicesSkipped } from './test-services.ts';

/**
 * Test helpers for suites that need a real PostgreSQL: `PG_TEST_URL`, else the local default.
 * Without a reachable server those suites skip with a message, except under CI=true where a
 * missing PostgreSQL is a failure (CI starts one), and in the unit run (TEST_SERVICES=none), where
 * they always skip. Each file makes its own schemas (random names, see urlOnSchema), so files
 * running in parallel on one database never share a table.
 */
export const PG_TEST_URL = process.env.PG_TEST_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Null when PostgreSQL answers, else why not. */
export async function postgresUnreachable(): Promise<string | null> {
  if (servicesSkipped()) return 'PostgreSQL is not used by the unit run (TEST_SERVICES=none)';
  const client = new pg.Client({ connectionString: PG_TEST_URL, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    return `PostgreSQL not reachable at ${redactedUrl(PG_TEST_URL)} (${(error as Error).message || String(error)})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Register the suite as skipped (with the reason), or as failed under CI=true. */
export function reportPostgresUnreachable(suite: string, reason: string): void {
  if (servicesSkipped()) {
    test(suite, { skip: reason }, () => {});
    return;
  }
  if (process.env.CI === 'true') {
    test(suite, () => {
      throw new Error(`${reason}; CI=true requires PostgreSQL (start it or set PG_TEST_URL).`);
    });
    return;
  }
  test(suite, { skip: `${reason}; start PostgreSQL or set PG_TEST_URL to run it` }, () => {});
}

/** The test URL with every connection's search_path on `schema` (and other settings given as `-c name=value`). */
export function urlOnSchema(schema: string, extra: Record<string, string> = {}, settings = ''): string {
  const url = new URL(PG_TEST_URL);
  url.searchParams.set('options', `-c search_path=${schema} ${settings}`.trim());
  for (const [name, value] of Object.entries(extra)) url.searchParams.set(name, value);
  return url.href;
}
