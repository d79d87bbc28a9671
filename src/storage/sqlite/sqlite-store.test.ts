import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { runConsoleStoreContract } from '../../testing/console-store-contract.ts';
import { runFixStoreContract } from '../../testing/fix-store-contract.ts';
import { runLedgerContract } from '../../testing/ledger-contract.ts';
import { runStoreContract, sampleKey, sampleReceipt } from '../../testing/store-contract.ts';
import { DEFAULT_ACCOUNT_ID } from '../store.ts';
import { BASELINE } from './migrations.ts';
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
    assert.deepEqual(JSON.parse(stdout), { versions: [BASELINE.version], journal: 'wal', accounts: 1 });
  });
});

runLedgerContract('sqlite', async () => createSqliteStore(join(await mkdtemp(join(tmpdir(), 'ledger-contract-')), 'gateway.db')));
runFixStoreContract('sqlite file', async () => createSqliteStore(await temporaryDatabase()));
runFixStoreContract('sqlite :memory:', async () => createSqliteStore(':memory:'));
runConsoleStoreContract('sqlite file', async () => createSqliteStore(await temporaryDatabase()));
runConsoleStoreContract('sqlite :memory:', async () => createSqliteStore(':memory:'));
