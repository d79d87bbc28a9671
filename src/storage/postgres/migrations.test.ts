import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { readSchema, schemaDirectory } from '../schema-files.ts';
import { applyMigrations, BASELINE, postgresSchema } from './migrations.ts';
import { PG_TEST_URL, postgresUnreachable, reportPostgresUnreachable, urlOnSchema } from '../../../test/helpers/postgres-test-connection.ts';

/** A database as the last build before the squash left it (see the files' first lines). */
const fixture = (name: string) => readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8');
const functionFiles = readdirSync(join(schemaDirectory('postgres'), 'functions')).sort();
/** This build's migrations after the baseline, and the newest version it knows. */
const laterMigrations = postgresSchema().migrations.map(({ version, name }) => ({ version, name }));
const known = laterMigrations.at(-1)?.version ?? BASELINE.version;

let pool: pg.Pool | undefined;
/** The test database, as its owner: schemas are made and dropped with it. */
const admin = () => (pool ??= new pg.Pool({ connectionString: PG_TEST_URL, max: 2 }));
const schemas: string[] = [];
const directories: string[] = [];

after(async () => {
  for (const schema of schemas) await admin().query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await pool?.end();
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

/** A new empty schema, dropped when the file's tests end. */
async function freshSchema(): Promise<string> {
  const schema = `gw_mig_${randomBytes(6).toString('hex')}`;
  await admin().query(`CREATE SCHEMA ${schema}`);
  schemas.push(schema);
  return schema;
}

/** `body` with a client whose search_path is `schema`, as the gateway's connections have. */
async function onSchema<T>(schema: string, body: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const connections = new pg.Pool({ connectionString: urlOnSchema(schema), max: 1 });
  const client = await connections.connect();
  try {
    return await body(client);
  } finally {
    client.release();
    await connections.end();
  }
}

const migrate = (schema: string, files = postgresSchema()) => onSchema(schema, (client) => applyMigrations(client, undefined, files));

/** A copy of this build's schema files to change, read back by `read()`. */
function schemaCopy() {
  const directory = mkdtempSync(join(tmpdir(), 'gateway-pg-schema-'));
  directories.push(directory);
  cpSync(schemaDirectory('postgres'), directory, { recursive: true });
  return { directory, read: () => readSchema(directory, BASELINE, 'DATABASE_URL at a new database') };
}

/** The rows of `sql` on `schema`, which is $1 where the query names it. */
const rows = async (schema: string, sql: string) =>
  onSchema(schema, async (client) => (await client.query(sql, sql.includes('$1') ? [schema] : [])).rows);

/** What the schema is made of, as pg_dump would tell it, without the schema's name. */
async function definition(schema: string) {
  const unqualified = (value: unknown) => JSON.parse(JSON.stringify(value).replaceAll(`${schema}.`, ''));
  const of = async (sql: string) => unqualified(await rows(schema, sql));
  return {
    relations: await of(`SELECT c.relname, c.relkind, c.reloptions FROM pg_class c
      WHERE c.relnamespace = $1::regnamespace AND c.relname NOT IN ('schema_migrations', 'schema_migrations_pkey', 'schema_functions', 'schema_functions_pkey') ORDER BY 1`),
    columns: await of(`SELECT c.relname, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull, a.attidentity,
        pg_get_expr(d.adbin, d.adrelid) AS default_value
      FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE c.relnamespace = $1::regnamespace AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
        AND c.relname NOT IN ('schema_migrations', 'schema_functions') ORDER BY 1, 2`),
    constraints: await of(`SELECT c.relname, k.conname, pg_get_constraintdef(k.oid) AS definition
      FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
      WHERE k.connamespace = $1::regnamespace AND c.relname NOT IN ('schema_migrations', 'schema_functions') ORDER BY 1, 2`),
    indexes: await of(`SELECT indexname, indexdef FROM pg_indexes
      WHERE schemaname = $1 AND tablename NOT IN ('schema_migrations', 'schema_functions') ORDER BY 1`),
    sequences: await of(`SELECT sequencename, start_value, increment_by, min_value, max_value, cache_size, cycle FROM pg_sequences
      WHERE schemaname = $1 ORDER BY 1`),
    triggers: await of(`SELECT t.tgname, pg_get_triggerdef(t.oid) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
      WHERE c.relnamespace = $1::regnamespace AND NOT t.tgisinternal ORDER BY 1`),
    functions: await of(`SELECT p.proname, pg_get_function_arguments(p.oid) AS arguments, pg_get_function_result(p.oid) AS result,
        l.lanname, p.provolatile, p.proconfig, p.prosrc
      FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE p.pronamespace = $1::regnamespace ORDER BY 1, 2`),
  };
}

/** The row versions of every catalog entry of the schema and what the bookkeeping tables hold: any write shows. */
async function snapshot(schema: string) {
  return {
    catalog: await rows(
      schema,
      `SELECT 'class' AS kind, c.relname AS name, c.xmin::text FROM pg_class c WHERE c.relnamespace = $1::regnamespace
       UNION ALL SELECT 'proc', p.proname, p.xmin::text FROM pg_proc p WHERE p.pronamespace = $1::regnamespace
       UNION ALL SELECT 'attribute', c.relname || '.' || a.attname, a.xmin::text FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
         WHERE c.relnamespace = $1::regnamespace ORDER BY 1, 2`,
    ),
    versions: await rows(schema, 'SELECT version, name, applied_at FROM schema_migrations ORDER BY version'),
    accounts: await rows(schema, 'SELECT * FROM accounts ORDER BY id'),
  };
}

async function procVersions(schema: string): Promise<Map<string, string>> {
  const found = await rows(schema, 'SELECT p.proname, p.xmin::text FROM pg_proc p WHERE p.pronamespace = $1::regnamespace');
  return new Map(found.map((row) => [row.proname, row.xmin]));
}

async function fromFixture(name: string): Promise<string> {
  const schema = await freshSchema();
  await onSchema(schema, (client) => client.query(fixture(name)));
  return schema;
}

const unreachable = await postgresUnreachable();
if (unreachable !== null) reportPostgresUnreachable('PostgreSQL migrations', unreachable);
else
  describe('postgres migrations', () => {
    test('a new database gets the baseline, the migrations after it and every function, each recorded with its file sha256', async () => {
      const schema = await freshSchema();
      await migrate(schema);
      assert.deepEqual(await rows(schema, 'SELECT version, name FROM schema_migrations ORDER BY version'), [
        { version: 20, name: BASELINE.name },
        ...laterMigrations,
      ]);
      const recorded = await rows(schema, 'SELECT file, sha256 FROM schema_functions ORDER BY file');
      const directory = join(schemaDirectory('postgres'), 'functions');
      assert.deepEqual(
        recorded,
        functionFiles.map((file) => ({
          file,
          sha256: createHash('sha256')
            .update(readFileSync(join(directory, file)))
            .digest('hex'),
        })),
      );
      assert.deepEqual(
        [...(await procVersions(schema)).keys()].sort(),
        functionFiles.map((file) => file.replace(/\.sql$/, '').replaceAll('-', '_')),
      );
      assert.deepEqual(await rows(schema, 'SELECT id, balance_nano FROM accounts'), [{ id: 'default', balance_nano: '0' }]);
      assert.deepEqual(await rows(schema, 'SELECT * FROM key_changes'), [{ id: true, version: '0' }]);
      assert.equal((await rows(schema, 'SELECT count(*)::int AS count FROM ledger_identity'))[0].count, 1);
    });

    test('the baseline is the schema the last build before the squash made, at version 20', async () => {
      const made = await fromFixture('pre-squash-v20.sql.txt');
      const fresh = await freshSchema();
      await onSchema(fresh, (client) => client.query(postgresSchema().baseline.sql));
      // Its functions were the files of that build; this build's are its own files (the test below).
      const tables = (described: Awaited<ReturnType<typeof definition>>) => ({ ...described, functions: [] });
      assert.deepEqual(tables(await definition(fresh)), tables(await definition(made)));
    });

    test('a database at version 20 made by that build is adopted: tables untouched, functions applied by checksum', async () => {
      const schema = await fromFixture('pre-squash-v20.sql.txt');
      const before = await snapshot(schema);
      await migrate(schema);
      const adopted = await snapshot(schema);
      const tables = (shot: typeof before) => shot.catalog.filter((row) => row.kind !== 'proc' && !row.name.startsWith('schema_functions'));
      assert.deepEqual(tables(adopted), tables(before), 'no table, index, sequence or column rewritten');
      const versions = (shot: typeof before) => shot.versions.map(({ version, name }) => ({ version, name }));
      assert.deepEqual(versions(adopted), [...versions(before), ...laterMigrations], 'only the migrations after the baseline added');
      assert.deepEqual(adopted.accounts, before.accounts);
      assert.equal((await rows(schema, 'SELECT count(*)::int AS count FROM schema_functions'))[0].count, functionFiles.length);
      // Its functions now read as this build's files: the database is one a new start would make.
      const fresh = await freshSchema();
      await migrate(fresh);
      assert.deepEqual(await definition(schema), await definition(fresh));
      const procs = await procVersions(schema);
      await migrate(schema);
      assert.deepEqual(await procVersions(schema), procs, 'nothing applied again at the next start');
    });

    test('a changed function file is applied again at the next start; the unchanged ones are not', async () => {
      const schema = await freshSchema();
      await migrate(schema);
      const before = await procVersions(schema);
      const copy = schemaCopy();
      const path = join(copy.directory, 'functions', 'gateway-key-day-used.sql');
      writeFileSync(
        path,
        readFileSync(path, 'utf8').replace(/\n\$\$;\n$/, () => '\n  -- changed\n$$;\n'),
      );
      await migrate(schema, copy.read());
      const after = await procVersions(schema);
      assert.notEqual(after.get('gateway_key_day_used'), before.get('gateway_key_day_used'));
      for (const [name, version] of before) if (name !== 'gateway_key_day_used') assert.equal(after.get(name), version, name);
      const [changed] = await rows(schema, "SELECT prosrc FROM pg_proc WHERE proname = 'gateway_key_day_used' AND pronamespace = $1::regnamespace");
      assert.match(changed.prosrc, /-- changed/);
      const [recorded] = await rows(schema, "SELECT sha256 FROM schema_functions WHERE file = 'gateway-key-day-used.sql'");
      assert.equal(recorded.sha256, createHash('sha256').update(readFileSync(path)).digest('hex'));
      await migrate(schema, copy.read());
      assert.deepEqual(await procVersions(schema), after, 'applied once');
      // This build's own file again: applied back.
      await migrate(schema);
      assert.notEqual((await procVersions(schema)).get('gateway_key_day_used'), after.get('gateway_key_day_used'));
    });

    test('a function file no longer in the build is forgotten by schema_functions', async () => {
      const schema = await freshSchema();
      await migrate(schema);
      await onSchema(schema, (client) => client.query("INSERT INTO schema_functions VALUES ('gateway-gone.sql', 'abc', now())"));
      await migrate(schema);
      assert.deepEqual(
        (await rows(schema, 'SELECT file FROM schema_functions ORDER BY file')).map((row) => row.file),
        functionFiles,
      );
    });

    test('migration files above the last one are applied in order, one transaction each, and recorded', async () => {
      const schema = await freshSchema();
      await migrate(schema);
      const copy = schemaCopy();
      const file = (step: number, name: string) => `${String(known + step).padStart(4, '0')}-${name}.sql`;
      const migration = (name: string, sql: string) => writeFileSync(join(copy.directory, 'migrations', name), sql);
      mkdirSync(join(copy.directory, 'migrations'), { recursive: true });
      migration(file(2, 'notes-have-a-body'), 'ALTER TABLE notes ADD COLUMN body text;');
      migration(file(1, 'notes'), 'CREATE TABLE notes (id text PRIMARY KEY);');
      migration(file(3, 'broken'), 'ALTER TABLE notes ADD COLUMN broken text; SELECT 1 / 0;');
      await assert.rejects(migrate(schema, copy.read()), /division by zero/);
      assert.deepEqual(await rows(schema, 'SELECT version, name FROM schema_migrations ORDER BY version'), [
        { version: 20, name: BASELINE.name },
        ...laterMigrations,
        { version: known + 1, name: 'notes' },
        { version: known + 2, name: 'notes have a body' },
      ]);
      const columns = await rows(
        schema,
        "SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'notes' ORDER BY 1",
      );
      assert.deepEqual(
        columns.map((row) => row.column_name),
        ['body', 'id'],
        'the failed migration left nothing',
      );
      migration(file(3, 'broken'), 'ALTER TABLE notes ADD COLUMN mended text;');
      await migrate(schema, copy.read());
      assert.deepEqual(
        (await rows(schema, 'SELECT version FROM schema_migrations ORDER BY version')).map((row) => row.version),
        [20, ...laterMigrations.map((step) => step.version), known + 1, known + 2, known + 3],
      );
      // This build knows nothing past its last migration: that database is now newer than it.
      await assert.rejects(migrate(schema), {
        message:
          `this database was made by a newer build of the gateway (schema version ${known + 3}; this build knows versions up to ${known}); ` +
          'run that build or a later one, or point DATABASE_URL at a new database',
      });
      assert.throws(() => (migration('0020-too-low.sql', ''), copy.read()), /numbered from 21/);
    });

    test('a database at an older version is refused with what to do, and left as it was', async () => {
      const schema = await fromFixture('pre-squash-v12.sql.txt');
      const before = await snapshot(schema);
      assert.equal(before.versions.length, 12);
      await assert.rejects(migrate(schema), {
        message:
          'this database was made by an older build of the gateway (schema version 12); start the gateway at commit 6f91688 ' +
          '(schema version 20, the last before the schema history was squashed) on it once to upgrade it, or point DATABASE_URL at a new database',
      });
      assert.deepEqual(await snapshot(schema), before);
      assert.deepEqual(await rows(schema, "SELECT to_regclass($1 || '.schema_functions') AS present"), [{ present: null }]);
    });

    test('a database newer than this build is refused, and left as it was', async () => {
      const schema = await freshSchema();
      await migrate(schema);
      await onSchema(schema, (client) => client.query("INSERT INTO schema_migrations VALUES (31, 'from a later build', now())"));
      const before = await snapshot(schema);
      await assert.rejects(
        migrate(schema),
        new RegExp(`made by a newer build of the gateway \\(schema version 31; this build knows versions up to ${known}\\)`),
      );
      assert.deepEqual(await snapshot(schema), before);
    });

    test('several processes adopting one database at version 20 at once all succeed, its versions as they were', async () => {
      const schema = await fromFixture('pre-squash-v20.sql.txt');
      await Promise.all(Array.from({ length: 4 }, () => migrate(schema)));
      assert.equal((await rows(schema, 'SELECT count(*)::int AS count FROM schema_functions'))[0].count, functionFiles.length);
      assert.deepEqual(
        (await rows(schema, 'SELECT version FROM schema_migrations ORDER BY version')).map((row) => row.version),
        [...Array.from({ length: 20 }, (_, index) => index + 1), ...laterMigrations.map((step) => step.version)],
      );
    });
  });
