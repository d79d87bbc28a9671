import type { Database } from 'better-sqlite3';
import { nextMigration, readSchema, schemaDirectory, type Schema } from '../schema-files.ts';
import { DEFAULT_ACCOUNT_ID } from '../store.ts';

// A new database gets schema/baseline.sql (version 8); each later change is one more file, schema/migrations/NNNN-what-it-does.sql,
// additive and never edited once released, applied in order in one transaction each and recorded in schema_migrations.

/** Version 8, where the history was squashed: a database made by an earlier build at version 8 is adopted as it is. */
export const BASELINE = { version: 8, name: 'baseline: the schema as version 8 left it' } as const;

let files: Schema | undefined;

/** This build's SQLite schema, read from its files once. */
export function sqliteSchema(): Schema {
  return (files ??= readSchema(schemaDirectory('sqlite'), BASELINE, 'database.path at a new file'));
}

/**
 * Bring the database up to this build's schema and make sure the default account exists. Each
 * step is one BEGIN IMMEDIATE transaction, which takes the write lock before reading the
 * recorded versions: when two processes start at once the second waits (busy_timeout), then
 * finds the first's steps done. A database this build refuses (nextMigration) is left as it was.
 */
export function applyMigrations(db: Database, now: () => string = () => new Date().toISOString(), schema = sqliteSchema()): void {
  const step = db.transaction((): boolean => {
    const present = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get() !== undefined;
    const migration = nextMigration(schema, present ? db.prepare<[], number>('SELECT version FROM schema_migrations').pluck().all() : null);
    if (!migration) {
      db.prepare<[string, string]>('INSERT OR IGNORE INTO accounts (id, balance_nano, created_at) VALUES (?, 0, ?)').run(DEFAULT_ACCOUNT_ID, now());
      return true;
    }
    if (!present) db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT');
    db.exec(migration.sql);
    db.prepare<[number, string, string]>('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
      migration.version,
      migration.name,
      now(),
    );
    return false;
  });
  while (!step.immediate());
}
