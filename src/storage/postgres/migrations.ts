import type { PoolClient } from 'pg';
import { nextMigration, readSchema, schemaDirectory, type Schema, type SqlFunction } from '../schema-files.ts';
import { DEFAULT_ACCOUNT_ID } from '../store.ts';

// A new database gets schema/baseline.sql (version 20); each later change is one more file, schema/migrations/NNNN-what-it-does.sql,
// additive and never edited once released, applied in order in one transaction each and recorded in schema_migrations. A function is one
// file in schema/functions/ (CREATE OR REPLACE), applied after them when its sha256 is not schema_functions'; a migration drops a changed
// signature or a removed function, whose file's row schema_functions then forgets.

/** Version 20, where the history was squashed: a database made by an earlier build at version 20 is adopted as it is. */
export const BASELINE = { version: 20, name: 'baseline: the schema as version 20 left it' } as const;

let files: Schema | undefined;

/** This build's PostgreSQL schema, read from its files once. */
export function postgresSchema(): Schema {
  return (files ??= readSchema(schemaDirectory('postgres'), BASELINE, 'DATABASE_URL at a new database'));
}

/**
 * Bring the database up to this build's schema and make sure the default account exists. Each
 * step is one transaction that first takes a transaction-scoped advisory lock (one per schema),
 * then reads the recorded versions: processes that start at once take turns, and the later ones
 * find the earlier's steps done. DDL in PostgreSQL is transactional, so a failed step leaves
 * nothing half done, and a database this build refuses (nextMigration) is left as it was.
 */
export async function applyMigrations(
  client: PoolClient,
  now: () => string = () => new Date().toISOString(),
  schema = postgresSchema(),
): Promise<void> {
  while (!(await applyNextStep(client, schema, now)));
}

/** The next migration (false: look again), or, with none left, the functions and the default account (true). */
async function applyNextStep(client: PoolClient, schema: Schema, now: () => string): Promise<boolean> {
  await client.query('BEGIN');
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtext('model-gateway migrations ' || coalesce(current_schema(), '')))");
    const recorded = await recordedVersions(client);
    const migration = nextMigration(schema, recorded);
    if (migration) {
      if (recorded === null) {
        await client.query('CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)');
      }
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [migration.version, migration.name, now()]);
    } else {
      await applyFunctions(client, schema.functions, now);
      await client.query('INSERT INTO accounts (id, balance_nano, created_at) VALUES ($1, 0, $2) ON CONFLICT (id) DO NOTHING', [
        DEFAULT_ACCOUNT_ID,
        now(),
      ]);
    }
    await client.query('COMMIT');
    return migration === null;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** The versions in schema_migrations, or null when the current schema has no such table (a new database). */
async function recordedVersions(client: PoolClient): Promise<number[] | null> {
  const { rows } = await client.query<{ present: boolean }>(
    "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = 'schema_migrations') AS present",
  );
  if (!rows[0]!.present) return null;
  return (await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((row) => row.version);
}

/** Each function whose file's sha256 is not the one recorded (a new function, or a changed one) applied and recorded; removed files forgotten. */
async function applyFunctions(client: PoolClient, functions: readonly SqlFunction[], now: () => string): Promise<void> {
  await client.query('CREATE TABLE IF NOT EXISTS schema_functions (file text PRIMARY KEY, sha256 text NOT NULL, applied_at timestamptz NOT NULL)');
  const { rows } = await client.query<{ file: string; sha256: string }>('SELECT file, sha256 FROM schema_functions');
  const applied = new Map(rows.map((row) => [row.file, row.sha256]));
  for (const fn of functions) {
    if (applied.get(fn.file) === fn.sha256) continue;
    await client.query(fn.sql);
    await client.query(
      `INSERT INTO schema_functions (file, sha256, applied_at) VALUES ($1, $2, $3)
       ON CONFLICT (file) DO UPDATE SET sha256 = EXCLUDED.sha256, applied_at = EXCLUDED.applied_at`,
      [fn.file, fn.sha256, now()],
    );
  }
  await client.query('DELETE FROM schema_functions WHERE file <> ALL($1::text[])', [functions.map((fn) => fn.file)]);
}
