import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { bundleServer } from '../../scripts/bundle-server.mjs';
import { LAST_UNSQUASHED_BUILD, nextMigration, readSchema, schemaDirectory, type Schema } from './schema-files.ts';
import type { Store } from './store.ts';
import { PG_TEST_URL, postgresUnreachable, urlOnSchema } from '../../test/helpers/postgres-test-connection.ts';

const schema = (versions: number[]): Schema => ({
  baseline: { version: 20, name: 'baseline', sql: 'CREATE TABLE t (id int);' },
  migrations: versions.map((version) => ({ version, name: `step ${version}`, sql: '' })),
  functions: [],
  elsewhere: 'DATABASE_URL at a new database',
});

describe('schema files', () => {
  test('the next step: the baseline for a new database, then each migration above the newest version recorded', () => {
    assert.equal(nextMigration(schema([21, 22]), null)?.name, 'baseline');
    assert.equal(nextMigration(schema([21, 22]), [20])?.version, 21);
    // A database made before the squash recorded every version up to the baseline's.
    assert.equal(
      nextMigration(
        schema([21, 22]),
        [...Array(20).keys()].map((index) => index + 1),
      )?.version,
      21,
    );
    assert.equal(nextMigration(schema([21, 22]), [20, 21])?.version, 22);
    assert.equal(nextMigration(schema([21, 22]), [20, 21, 22]), null);
    assert.equal(nextMigration(schema([]), [20]), null);
  });

  test('a database older than the baseline, newer than the build, or with no version is refused with what to do', () => {
    assert.throws(() => nextMigration(schema([21]), [1, 2, 3]), {
      message:
        `this database was made by an older build of the gateway (schema version 3); start the gateway at commit ${LAST_UNSQUASHED_BUILD} ` +
        '(schema version 20, the last before the schema history was squashed) on it once to upgrade it, or point DATABASE_URL at a new database',
    });
    assert.throws(
      () => nextMigration(schema([21]), [20, 21, 22]),
      /newer build of the gateway \(schema version 22; this build knows versions up to 21\)/,
    );
    assert.throws(() => nextMigration(schema([]), []), /empty schema_migrations table/);
  });

  test("this build's schema files: named, numbered and read as the runners expect", () => {
    for (const backend of ['postgres', 'sqlite'] as const) {
      const files = readSchema(schemaDirectory(backend), { version: 1, name: 'baseline' }, 'elsewhere');
      assert.match(files.baseline.sql, /CREATE TABLE accounts/);
      for (const migration of files.migrations) assert.ok(migration.version > 1);
    }
    const functions = readSchema(schemaDirectory('postgres'), { version: 20, name: 'baseline' }, 'elsewhere').functions;
    assert.ok(functions.length > 0);
    for (const fn of functions) {
      // One function a file, re-appliable, named as its file.
      assert.equal([...fn.sql.matchAll(/CREATE (OR REPLACE )?FUNCTION/g)].length, 1, fn.file);
      assert.match(fn.sql, new RegExp(`CREATE OR REPLACE FUNCTION ${fn.file.replace(/\.sql$/, '').replaceAll('-', '_')}\\(`), fn.file);
      assert.match(fn.sha256, /^[0-9a-f]{64}$/);
    }
  });

  test('no source file of the schema is longer than 400 lines', () => {
    const root = fileURLToPath(new URL('./', import.meta.url));
    const files = ['schema-files.ts', 'postgres/migrations.ts', 'sqlite/migrations.ts', 'postgres/schema/baseline.sql', 'sqlite/schema/baseline.sql'];
    files.push('schema-files.test.ts', 'postgres/migrations.test.ts', 'sqlite/migrations.test.ts');
    for (const file of readdirSync(join(root, 'postgres', 'schema', 'functions'))) files.push(join('postgres', 'schema', 'functions', file));
    for (const file of files) {
      const lines = readFileSync(join(root, file), 'utf8').split('\n').length - 1;
      assert.ok(lines <= 400, `${file}: ${lines} lines`);
    }
  });

  test('the compiled build finds the schema files beside its chunks, and makes a working database of each backend', async () => {
    const out = join(fileURLToPath(new URL('../../dist/', import.meta.url)), `schema-files-test-${process.pid}-${randomBytes(3).toString('hex')}`);
    const scratch = mkdtempSync(join(tmpdir(), 'gateway-compiled-schema-'));
    const stores = fileURLToPath(new URL('./', import.meta.url));
    try {
      // Two entries sharing the schema reader: it goes into a chunk, as in dist/server.
      await bundleServer(out, {
        'postgres-store': join(stores, 'postgres', 'postgres-store.ts'),
        'sqlite-store': join(stores, 'sqlite', 'sqlite-store.ts'),
      });
      assert.ok(readdirSync(out).some((file) => /^chunk-.*\.js$/.test(file)));
      const load = async (name: string) => import(pathToFileURL(join(out, `${name}.js`)).href);
      const check = async (store: Store) => {
        try {
          await store.migrate();
          assert.equal(await store.getBalance('default'), 0);
        } finally {
          await store.close();
        }
      };
      await check((await load('sqlite-store')).createSqliteStore(join(scratch, 'gateway.db')));
      if ((await postgresUnreachable()) === null || process.env.CI === 'true') {
        const name = `gw_compiled_${randomBytes(6).toString('hex')}`;
        const admin = new pg.Client({ connectionString: PG_TEST_URL });
        await admin.connect();
        try {
          await admin.query(`CREATE SCHEMA ${name}`);
          await check((await load('postgres-store')).createPostgresStore(urlOnSchema(name)));
          const { rows } = await admin.query(`SELECT count(*)::int AS count FROM ${name}.schema_functions`);
          assert.equal(rows[0].count, readdirSync(join(stores, 'postgres', 'schema', 'functions')).length);
        } finally {
          await admin.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
          await admin.end();
        }
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
