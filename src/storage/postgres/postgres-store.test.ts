import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runConsoleStoreContract } from '../../testing/console-store-contract.ts';
import { runFixStoreContract } from '../../testing/fix-store-contract.ts';
import { runLedgerContract } from '../../testing/ledger-contract.ts';
import { runStoreContract, sampleKey, sampleReceipt } from '../../testing/store-contract.ts';
import { DEFAULT_ACCOUNT_ID } from '../store.ts';
import { BASELINE, postgresSchema } from './migrations.ts';
import { poolSettings, redactedUrl } from './postgres-pool.ts';
import { createPostgresStore } from './postgres-store.ts';
import { urlOnSchema } from '../../../test/helpers/postgres-test-connection.ts';
import { onPostgres } from '../../testing/postgres-test-schemas.ts';

describe('postgres pool settings', () => {
  test('pool_max sizes the pool and is not passed on to pg; bad values are refused', () => {
    assert.deepEqual(poolSettings('postgres://u@h:5432/db?pool_max=3&sslmode=disable'), {
      connectionString: 'postgres://u@h:5432/db?sslmode=disable&options=-c+DateStyle%3DISO',
      max: 3,
    });
    const withOptions = new URL(poolSettings('postgres://u@h/db?options=-c%20search_path%3Dgw').connectionString);
    assert.equal(withOptions.searchParams.get('options'), '-c search_path=gw -c DateStyle=ISO');
    assert.equal(poolSettings('postgresql://u@h/db').max, 10);
    const settlements = new URL(poolSettings('postgres://u@h/db?pool_max=3', { max: 2, flushLater: true }).connectionString);
    assert.equal(settlements.searchParams.get('options'), '-c DateStyle=ISO -c synchronous_commit=off');
    assert.equal(poolSettings('postgres://u@h/db?pool_max=3', { max: 2 }).max, 2);
    assert.throws(() => poolSettings('postgres://u@h/db?pool_max=0'), /pool_max/);
    assert.throws(() => poolSettings('postgres://u@h/db?pool_max=many'), /pool_max/);
    assert.throws(() => poolSettings('mysql://u@h/db'), /postgres:\/\//);
  });

  test('messages never show the password', () => {
    assert.equal(redactedUrl('postgres://user:secret@h:5432/db'), 'postgres://user:***@h:5432/db');
  });
});

await onPostgres('PostgreSQL store', ({ admin, freshSchema, freshStore, withTwoProcesses }) => {
  runStoreContract('postgres', freshStore);
  runLedgerContract('postgres', freshStore);
  runFixStoreContract('postgres', freshStore);
  runConsoleStoreContract('postgres', freshStore);

  describe('postgres store', () => {
    test('several processes migrating one new schema at once all succeed, each migration once', async () => {
      const schema = await freshSchema();
      const stores = Array.from({ length: 4 }, () => createPostgresStore(urlOnSchema(schema)));
      try {
        await Promise.all(stores.map((store) => store.migrate()));
        const { rows } = await admin.query(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`);
        assert.deepEqual(
          rows.map((row) => row.version),
          [BASELINE.version, ...postgresSchema().migrations.map((migration) => migration.version)],
        );
        const accounts = await admin.query(`SELECT count(*)::int AS count FROM ${schema}.accounts`);
        assert.equal(accounts.rows[0].count, 1);
      } finally {
        await Promise.all(stores.map((store) => store.close()));
      }
    });

    test('use before migrate says so', async () => {
      const store = await freshStore();
      try {
        await assert.rejects(store.listKeys(DEFAULT_ACCOUNT_ID), /no gateway schema yet; call migrate\(\) first/);
      } finally {
        await store.close();
      }
    });

    test('a BIGINT beyond Number.MAX_SAFE_INTEGER is refused, not rounded', () =>
      withTwoProcesses(async (store, _other, schema) => {
        await admin.query(`UPDATE ${schema}.accounts SET balance_nano = 9007199254740993 WHERE id = $1`, [DEFAULT_ACCOUNT_ID]);
        await assert.rejects(store.getBalance(DEFAULT_ACCOUNT_ID), RangeError);
        await admin.query(`UPDATE ${schema}.accounts SET balance_nano = 9007199254740991 WHERE id = $1`, [DEFAULT_ACCOUNT_ID]);
        assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), Number.MAX_SAFE_INTEGER);
      }));

    test('a NUL character in receipt JSON (refused by jsonb) is replaced, never failing the charge', () =>
      withTwoProcesses(async (store) => {
        await store.addFunds(DEFAULT_ACCOUNT_ID, 10_000, 'test');
        const receipt = sampleReceipt({ attempts: [{ model: 'sim/steady', outcome: 'failed', detail: 'bad\0byte', latencyMs: 1 }], costNano: 100 });
        await store.recordReceipt(receipt);
        assert.equal((await store.getReceipt(DEFAULT_ACCOUNT_ID, receipt.id))?.attempts[0]?.detail, 'bad\uFFFDbyte');
        assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 9_900);
        // Settled together (one batch), beside text that only spells out the escape, which stays.
        const together = [
          sampleReceipt({ id: 'rcpt_nul_1', attempts: [{ model: 'sim/steady', outcome: 'failed', detail: '\0', latencyMs: 1 }], costNano: 10 }),
          sampleReceipt({
            id: 'rcpt_nul_2',
            attempts: [{ model: 'sim/steady', outcome: 'failed', detail: 'a \\u0000 b', latencyMs: 1 }],
            costNano: 20,
          }),
          sampleReceipt({ id: 'rcpt_nul_3', warnings: ['x\0y\0'], costNano: 30 }),
        ];
        await Promise.all(together.map((one) => store.recordReceipt(one)));
        const stored = await Promise.all(together.map((one) => store.getReceipt(DEFAULT_ACCOUNT_ID, one.id)));
        assert.equal(stored[0]?.attempts[0]?.detail, '\uFFFD');
        assert.equal(stored[1]?.attempts[0]?.detail, 'a \\u0000 b');
        assert.deepEqual(stored[2]?.warnings, ['x\uFFFDy\uFFFD']);
        assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 9_840);
      }));

    test('instants round-trip whatever the DateStyle and TimeZone of the session', async () => {
      const schema = await freshSchema();
      const store = createPostgresStore(urlOnSchema(schema, {}, '-c DateStyle=SQL,DMY -c TimeZone=Asia/Kolkata'));
      try {
        await store.migrate();
        const key = sampleKey({ expiresAt: '2026-03-08T07:30:00.123Z', createdAt: '1999-12-31T23:59:59.999Z' });
        await store.insertKey(key);
        assert.deepEqual(await store.findKeyByHash(key.hash), key);
        await store.recordReceipt(sampleReceipt({ createdAt: '2026-11-21T23:30:00.000Z', costNano: 5 }));
        assert.deepEqual(await store.keyDaySpend(key.id, '2026-11-21'), { chargedNano: 5, heldNano: 0 }, 'a hold-less charge counts on its UTC day');
      } finally {
        await store.close();
      }
    });

    test('close twice is harmless', async () => {
      const store = await freshStore();
      await store.close();
      await store.close();
    });
  });
});
