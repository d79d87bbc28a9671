import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A backend's schema as files in <backend>/schema/: baseline.sql (what a new database is made
 * with), migrations/NNNN-what-it-does.sql (each later change) and, on PostgreSQL, functions/*.sql
 * (one SQL function each). The runners are postgres/migrations.ts and sqlite/migrations.ts.
 */

/** A numbered step of a schema: its baseline, or one file in its migrations/. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** One function's file: CREATE OR REPLACE FUNCTION, applied again whenever its sha256 changes. */
export interface SqlFunction {
  file: string;
  sql: string;
  sha256: string;
}

export interface Schema {
  /** The squashed history: its version is the last one of that history. */
  baseline: Migration;
  /** In version order, every version above the baseline's. */
  migrations: readonly Migration[];
  /** In file name order. */
  functions: readonly SqlFunction[];
  /** What a refused database's message tells the operator to point elsewhere, e.g. "DATABASE_URL at a new database". */
  elsewhere: string;
}

/**
 * The last commit before the schema histories were squashed: PostgreSQL at version 20, SQLite at
 * version 8. Its build upgrades a database from any earlier version to those.
 */
export const LAST_UNSQUASHED_BUILD = '6f91688';

/**
 * Where a backend's .sql files are: src/storage/<backend>/schema/ from the sources, and
 * <bundle>/<backend>/schema/ in the compiled build, whose chunks stand where src/storage/ stands
 * here (scripts/bundle-server.mjs copies the files there).
 */
export function schemaDirectory(backend: 'postgres' | 'sqlite'): string {
  const directory = fileURLToPath(new URL(`./${backend}/schema/`, import.meta.url));
  if (!existsSync(join(directory, 'baseline.sql'))) {
    throw new Error(`the ${backend} schema files are missing: no ${join(directory, 'baseline.sql')} (the build copies them beside its modules)`);
  }
  return directory;
}

const MIGRATION_FILE = /^(\d{4})-([a-z0-9]+(?:-[a-z0-9]+)*)\.sql$/;

/** Reads a schema directory (see schemaDirectory); a misnamed or misnumbered migration file throws. */
export function readSchema(directory: string, baseline: { version: number; name: string }, elsewhere: string): Schema {
  const sqlFiles = (folder: string) =>
    existsSync(join(directory, folder))
      ? readdirSync(join(directory, folder))
          .filter((file) => file.endsWith('.sql'))
          .sort()
      : [];
  const migrations = sqlFiles('migrations').map((file, index, files): Migration => {
    const match = MIGRATION_FILE.exec(file);
    if (!match) throw new Error(`migrations/${file}: a migration's file is named NNNN-what-it-does.sql`);
    const version = Number(match[1]);
    if (version <= baseline.version) throw new Error(`migrations/${file}: migrations after the baseline are numbered from ${baseline.version + 1}`);
    if (index > 0 && files[index - 1]!.slice(0, 4) === match[1]) throw new Error(`migrations/${file}: two migrations numbered ${version}`);
    return { version, name: match[2]!.replaceAll('-', ' '), sql: readFileSync(join(directory, 'migrations', file), 'utf8') };
  });
  const functions = sqlFiles('functions').map((file): SqlFunction => {
    const bytes = readFileSync(join(directory, 'functions', file));
    return { file, sql: bytes.toString('utf8'), sha256: createHash('sha256').update(bytes).digest('hex') };
  });
  return { baseline: { ...baseline, sql: readFileSync(join(directory, 'baseline.sql'), 'utf8') }, migrations, functions, elsewhere };
}

/**
 * What to apply next to a database whose schema_migrations holds `recorded` (null: there is no
 * such table, a new database): the baseline, the first migration above its newest version, or
 * null when it is up to date. A database at the baseline's version made by a build from before
 * the squash (versions 1 to N recorded) is one at the baseline. Throws, before anything is
 * written, for a database this build cannot carry on from: older than the baseline, or newer
 * than this build knows.
 */
export function nextMigration(schema: Schema, recorded: readonly number[] | null): Migration | null {
  if (recorded === null) return schema.baseline;
  const base = schema.baseline.version;
  const known = schema.migrations.at(-1)?.version ?? base;
  if (recorded.length === 0) {
    throw new Error(`this database has an empty schema_migrations table, which no build of the gateway leaves; point ${schema.elsewhere}`);
  }
  const newest = Math.max(...recorded);
  if (newest < base) {
    throw new Error(
      `this database was made by an older build of the gateway (schema version ${newest}); start the gateway at commit ` +
        `${LAST_UNSQUASHED_BUILD} (schema version ${base}, the last before the schema history was squashed) on it once to upgrade it, ` +
        `or point ${schema.elsewhere}`,
    );
  }
  if (newest > known) {
    throw new Error(
      `this database was made by a newer build of the gateway (schema version ${newest}; this build knows versions up to ${known}); ` +
        `run that build or a later one, or point ${schema.elsewhere}`,
    );
  }
  return schema.migrations.find((migration) => migration.version > newest) ?? null;
}
