import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { runConsoleStoreContract } from '../../testing/console-store-contract.ts';
import { runFixStoreContract } from '../../testing/fix-store-contract.ts';
import { runLedgerContract } from '../../testing/ledger-contract.ts';
import { runStoreContract, sampleKey, sampleReceipt } from '../../testing/store-contract.ts';
import { DEFAULT_ACCOUNT_ID } from '../store.ts';
import { migrations } from './migrations.ts';
import { createSqliteStore } from './sqlite-store.ts';

const run = promisify(execFile);
const directories: string[] = [];

async function temporaryDatabase(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'gateway-sqlite-'));
  directories.push(directory);
  return join(directory, 'nested', 'gateway.db');
}

after(async () => {
  await Promise.all(directories.map((directory) => rm(directory, { recursive: true, force: true })));
});

runStoreContract('sqlite file', async () => createSqliteStore(await temporaryDatabase()));
runStoreContract('sqlite :memory:', async () => createSqliteStore(':memory:'));

describe('sqlite store', () => {
  test('migrations are numbered in increasing order', () => {
    const versions = migrations.map((migration) => migration.version);
    assert.deepEqual(
      versions,
      [...versions].sort((a, b) => a - b),
    );
    assert.equal(new Set(versions).size, versions.length);
  });

  test('keysChangeToken moves when another connection commits, not on our own writes', async () => {
    const path = await temporaryDatabase();
    const server = createSqliteStore(path);
    const cli = createSqliteStore(path);
    try {
      await server.migrate();
      await cli.migrate();
      const key = sampleKey({ prefix: 'svc_Watched1' });
      await server.insertKey(key);

      const before = await server.keysChangeToken();
      await server.recordReceipt(sampleReceipt({ id: 'rcpt_1' }));
      await server.recordReceipt(sampleReceipt({ id: 'rcpt_2', costNano: 0 }));
      assert.equal(await server.keysChangeToken(), before, 'own writes must not drop the key cache');

      const cliBefore = await cli.keysChangeToken();
      assert.ok(await cli.revokeKey(DEFAULT_ACCOUNT_ID, key.prefix, '2025-02-01T00:00:00.000Z', 'cli'));
      assert.equal(await cli.keysChangeToken(), cliBefore);
      // Reads of one turn of the event loop share one: the commit is seen from the next turn.
      assert.equal(await server.keysChangeToken(), before, 'read again in the same turn');
      await new Promise((resolve) => setImmediate(resolve));
      const afterRevoke = await server.keysChangeToken();
      assert.notEqual(afterRevoke, before, 'a revocation by another process must be noticed');
      assert.equal((await server.findKeyByHash(key.hash))?.revokedAt, '2025-02-01T00:00:00.000Z');
      assert.equal(await server.keysChangeToken(), afterRevoke, 'stable until the next outside commit');
    } finally {
      await server.close();
      await cli.close();
    }
  });

  test('use before migrate says so', async () => {
    const store = createSqliteStore(':memory:');
    await assert.rejects(store.listKeys(DEFAULT_ACCOUNT_ID), /no gateway schema yet; call migrate\(\) first/);
    await store.close();
  });

  test('opens in WAL mode and creates the parent directory', async () => {
    const path = await temporaryDatabase();
    const store = createSqliteStore(path);
    await store.migrate();
    await store.close();
    assert.ok(existsSync(path));
    // A second open sees the schema already there and adds nothing.
    const again = createSqliteStore(path);
    await again.migrate();
    assert.equal(await again.getBalance(DEFAULT_ACCOUNT_ID), 0);
    await again.close();
  });

  test('several processes migrating one new file at once all succeed, each migration once', async () => {
    const path = await temporaryDatabase();
    const storeModule = fileURLToPath(new URL('./sqlite-store.ts', import.meta.url));
    const script = `
      const { createSqliteStore } = await import(${JSON.stringify(storeModule)});
      const store = createSqliteStore(${JSON.stringify(path)});
      await store.migrate();
      await store.close();
    `;
    await Promise.all(Array.from({ length: 4 }, () => run(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', script])));
    const store = createSqliteStore(path);
    await store.migrate();
    assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 0);
    await store.close();
    const check = `
      const Database = (await import('better-sqlite3')).default;
      const db = new Database(${JSON.stringify(path)}, { readonly: true });
      console.log(JSON.stringify({
        versions: db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all(),
        journal: db.pragma('journal_mode', { simple: true }),
        accounts: db.prepare('SELECT count(*) FROM accounts').pluck().get(),
      }));
    `;
    const { stdout } = await run(process.execPath, ['--input-type=module', '--eval', check]);
    assert.deepEqual(JSON.parse(stdout), { versions: migrations.map((migration) => migration.version), journal: 'wal', accounts: 1 });
  });
});

test('receipts written before created_ns get distinct instants, in the order they were listed in', async () => {
  const path = await temporaryDatabase();
  mkdirSync(dirname(path), { recursive: true });
  // A database at version 6, as the gateway before created_ns left it.
  const db = new Database(path);
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT');
  for (const migration of migrations.filter((migration) => migration.version <= 6)) {
    db.exec(migration.sql);
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(migration.version, migration.name, '2025-01-01T00:00:00.000Z');
  }
  db.prepare("INSERT INTO accounts (id, balance_nano, created_at) VALUES (?, 0, '2025-01-01T00:00:00.000Z')").run(DEFAULT_ACCOUNT_ID);
  const insert = db.prepare(
    `INSERT INTO receipts (id, request_id, account_id, key_id, key_prefix, created_at, status, endpoint, stream, attempts, usage_estimated,
       hold_nano, cost_nano, latency_ms) VALUES (?, 'req', ?, 'key', 'svc_x', ?, 'succeeded', 'chat.completions', 0, '[]', 0, 0, 0, 1)`,
  );
  for (const [id, createdAt] of [
    ['rcpt_b', '2025-03-01T10:00:00.123Z'],
    ['rcpt_a', '2025-03-01T10:00:00.123Z'],
    ['rcpt_c', '2025-03-01T10:00:00.123Z'],
    ['rcpt_0', '2025-03-01T10:00:00.122Z'],
    ['rcpt_z', '1969-12-31T23:59:59.999Z'],
  ]) {
    insert.run(id, DEFAULT_ACCOUNT_ID, createdAt);
  }
  db.close();

  const store = createSqliteStore(path);
  try {
    await store.migrate();
    const page = await store.listReceipts(DEFAULT_ACCOUNT_ID, { limit: 10 });
    assert.deepEqual(
      page.data.map((receipt) => [receipt.id, receipt.createdAt]),
      [
        ['rcpt_c', '2025-03-01T10:00:00.123000002Z'],
        ['rcpt_b', '2025-03-01T10:00:00.123000001Z'],
        ['rcpt_a', '2025-03-01T10:00:00.123000000Z'],
        ['rcpt_0', '2025-03-01T10:00:00.122000000Z'],
        ['rcpt_z', '1969-12-31T23:59:59.999000000Z'],
      ],
    );
    await store.insertKey(sampleKey());
    await store.recordReceipt(sampleReceipt({ id: 'rcpt_new', createdAt: '2025-03-01T10:00:00.123Z', costNano: 0 }));
    assert.equal((await store.getReceipt(DEFAULT_ACCOUNT_ID, 'rcpt_new'))?.createdAt, '2025-03-01T10:00:00.123000003Z');
  } finally {
    await store.close();
  }
});

runLedgerContract('sqlite', async () => createSqliteStore(join(await mkdtemp(join(tmpdir(), 'ledger-contract-')), 'gateway.db')));
runFixStoreContract('sqlite file', async () => createSqliteStore(await temporaryDatabase()));
runFixStoreContract('sqlite :memory:', async () => createSqliteStore(':memory:'));
runConsoleStoreContract('sqlite file', async () => createSqliteStore(await temporaryDatabase()));
runConsoleStoreContract('sqlite :memory:', async () => createSqliteStore(':memory:'));
