import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { readSchema, schemaDirectory } from '../schema-files.ts';
import { DEFAULT_ACCOUNT_ID } from '../store.ts';
import { applyMigrations, BASELINE } from './migrations.ts';
import { createSqliteStore } from './sqlite-store.ts';

/** A database as the last build before the squash left it (see the files' first lines). */
const fixture = (name: string) => readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8');

const directories: string[] = [];
after(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

function temporaryDirectory(): string {
  const directory = mkdtempSync(join(tmpdir(), 'gateway-sqlite-schema-'));
  directories.push(directory);
  return directory;
}

/** A database file, empty or loaded from a fixture. */
function databaseFile(fixtureName?: string): string {
  const path = join(temporaryDirectory(), 'gateway.db');
  const db = new Database(path);
  if (fixtureName) db.exec(fixture(fixtureName));
  db.close();
  return path;
}

function withDatabase<T>(path: string, body: (db: Database.Database) => T): T {
  const db = new Database(path);
  try {
    return body(db);
  } finally {
    db.close();
  }
}

async function migrateWithStore(path: string): Promise<void> {
  const store = createSqliteStore(path);
  try {
    await store.migrate();
  } finally {
    await store.close();
  }
}

/** What the schema is made of: each object's text without whitespace (SQLite keeps it as written), and what the pragmas say of each table and index. */
function definition(path: string) {
  return withDatabase(path, (db) => {
    const objects = db
      .prepare<[], { type: string; name: string; sql: string | null }>('SELECT type, name, sql FROM sqlite_master ORDER BY type, name')
      .all();
    const tables = objects.filter((object) => object.type === 'table').map((object) => object.name);
    return {
      objects: objects.map((object) => ({ ...object, sql: object.sql?.replace(/\s+/g, '') ?? null })),
      tables: tables.map((table) => ({
        table,
        list: db.prepare('SELECT * FROM pragma_table_list WHERE name = ?').all(table),
        columns: db.prepare('SELECT * FROM pragma_table_xinfo(?)').all(table),
        foreignKeys: db.prepare('SELECT * FROM pragma_foreign_key_list(?)').all(table),
        indexes: db
          .prepare<[string], { name: string }>('SELECT * FROM pragma_index_list(?) ORDER BY name')
          .all(table)
          .map((index) => ({ ...index, columns: db.prepare('SELECT * FROM pragma_index_xinfo(?)').all(index.name) })),
      })),
    };
  });
}

/** Every object's text as stored and every row of every table: any write shows. */
function snapshot(path: string) {
  return withDatabase(path, (db) => {
    const objects = db
      .prepare<[], { type: string; name: string; sql: string | null }>('SELECT type, name, sql FROM sqlite_master ORDER BY type, name')
      .all();
    const rows = Object.fromEntries(
      objects.filter((object) => object.type === 'table').map((object) => [object.name, db.prepare(`SELECT * FROM "${object.name}"`).all()]),
    );
    return { objects, rows };
  });
}

/** Starting a store on the database fails with `message`, and the database is as it was. */
async function assertRefused(path: string, message: string | RegExp): Promise<void> {
  const before = snapshot(path);
  await assert.rejects(migrateWithStore(path), typeof message === 'string' ? { message } : message);
  assert.deepEqual(snapshot(path), before);
}

const versions = (path: string) => withDatabase(path, (db) => db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all());

describe('sqlite migrations', () => {
  test('a new database gets the baseline, recorded as its version', async () => {
    const path = databaseFile();
    await migrateWithStore(path);
    assert.deepEqual(
      withDatabase(path, (db) => db.prepare('SELECT version, name FROM schema_migrations').all()),
      [{ version: 8, name: BASELINE.name }],
    );
    assert.deepEqual(
      withDatabase(path, (db) => db.prepare('SELECT id, balance_nano FROM accounts').all()),
      [{ id: DEFAULT_ACCOUNT_ID, balance_nano: 0 }],
    );
  });

  test('the baseline is the schema the last build before the squash made, at version 8', async () => {
    const made = databaseFile('pre-squash-v8.sql.txt');
    const fresh = databaseFile();
    await migrateWithStore(fresh);
    assert.deepEqual(definition(fresh), definition(made));
  });

  test('a database at version 8 made by that build is adopted as it is, and works', async () => {
    const path = databaseFile('pre-squash-v8.sql.txt');
    const before = snapshot(path);
    await migrateWithStore(path);
    assert.deepEqual(snapshot(path), before, 'nothing written: its default account was there already');
    const store = createSqliteStore(path);
    try {
      await store.migrate();
      assert.equal(await store.addFunds(DEFAULT_ACCOUNT_ID, 5_000, 'test'), 5_000);
      assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 5_000);
    } finally {
      await store.close();
    }
    assert.deepEqual(versions(path), [1, 2, 3, 4, 5, 6, 7, 8]);
  });

  test('a database at an older version is refused with what to do, and left as it was', async () => {
    await assertRefused(
      databaseFile('pre-squash-v6.sql.txt'),
      'this database was made by an older build of the gateway (schema version 6); start the gateway at commit 6f91688 ' +
        '(schema version 8, the last before the schema history was squashed) on it once to upgrade it, or point database.path at a new file',
    );
  });

  test('a database newer than this build, or with no versions recorded, is refused and left as it was', async () => {
    const path = databaseFile();
    await migrateWithStore(path);
    withDatabase(path, (db) => db.prepare("INSERT INTO schema_migrations VALUES (12, 'from a later build', '2027-01-01T00:00:00.000Z')").run());
    await assertRefused(
      path,
      'this database was made by a newer build of the gateway (schema version 12; this build knows versions up to 8); ' +
        'run that build or a later one, or point database.path at a new file',
    );
    withDatabase(path, (db) => db.exec('DELETE FROM schema_migrations'));
    await assertRefused(path, /an empty schema_migrations table/);
  });

  test('migration files above the baseline are applied in order, one transaction each, and recorded', () => {
    const directory = temporaryDirectory();
    cpSync(schemaDirectory('sqlite'), directory, { recursive: true });
    mkdirSync(join(directory, 'migrations'), { recursive: true });
    const migration = (file: string, sql: string) => writeFileSync(join(directory, 'migrations', file), sql);
    migration('0010-notes-have-a-body.sql', 'ALTER TABLE notes ADD COLUMN body TEXT;');
    migration('0009-notes.sql', 'CREATE TABLE notes (id TEXT PRIMARY KEY) STRICT;');
    migration('0011-broken.sql', 'ALTER TABLE notes ADD COLUMN broken TEXT; INSERT INTO no_such_table VALUES (1);');
    const files = () => readSchema(directory, BASELINE, 'database.path at a new file');
    const path = databaseFile();
    withDatabase(path, (db) => assert.throws(() => applyMigrations(db, undefined, files()), /no such table: no_such_table/));
    assert.deepEqual(versions(path), [8, 9, 10]);
    assert.deepEqual(
      withDatabase(path, (db) => db.prepare("SELECT name FROM pragma_table_info('notes')").pluck().all()),
      ['id', 'body'],
      'the failed migration left nothing',
    );
    migration('0011-broken.sql', 'ALTER TABLE notes ADD COLUMN mended TEXT;');
    withDatabase(path, (db) => applyMigrations(db, undefined, files()));
    assert.deepEqual(versions(path), [8, 9, 10, 11]);
    migration('0011-twice.sql', '');
    assert.throws(files, /two migrations numbered 11/);
  });
});
