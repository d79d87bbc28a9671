import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { createMemoryHoldJournal, sampleHold } from '../src/testing/ledger-contract.ts';
import { createPostgresStore } from '../src/storage/postgres/postgres-store.ts';
import { sampleKey, sampleReceipt } from '../src/testing/store-contract.ts';
import { DEFAULT_ACCOUNT_ID, type Store } from '../src/storage/store.ts';
import { PG_TEST_URL, postgresUnreachable, reportPostgresUnreachable, urlOnSchema } from './helpers/postgres-test-connection.ts';

const MONTH = '2026-11';
const FUNDS = 10_000_000;
const HOLD = 1_000;
/** A lease is sized for 256 holds like the one that asked (postgres-balance-leases.ts). */
const LEASE = 256 * HOLD;
const OWNER = 'host/1/a';
const LATER = '2099-01-01T00:00:00.000Z';

const unreachable = await postgresUnreachable();

if (unreachable !== null) {
  reportPostgresUnreachable('balance leases', unreachable);
} else {
  /**
   * Balance leases on PostgreSQL, seen from two stores on one schema (two gateway processes): the
   * holds of a key without a daily limit go into the process's lease without writing the account
   * row, the other process sees the lease's reservation as taken, the books stay exact to the
   * nano at every step, and a survivor recovers a dead process's lease and the holds in it.
   */
  describe('balance leases', () => {
    const admin = new pg.Pool({ connectionString: PG_TEST_URL, max: 2 });
    const schemas: string[] = [];
    after(async () => {
      for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    });

    async function withTwoProcesses(
      body: (first: Store, second: Store, sql: (text: string) => Promise<any[]>) => Promise<void>,
      journal?: ReturnType<typeof createMemoryHoldJournal>,
    ): Promise<void> {
      const schema = `gw_lease_${randomBytes(6).toString('hex')}`;
      await admin.query(`CREATE SCHEMA ${schema}`);
      schemas.push(schema);
      const first = createPostgresStore(urlOnSchema(schema));
      const second = createPostgresStore(urlOnSchema(schema));
      if (journal) for (const store of [first, second]) store.useHoldJournal!(journal);
      try {
        await first.migrate();
        await first.insertKey(sampleKey());
        await first.insertKey(sampleKey({ id: 'key_000000002bbbbbbbbbbbb', hash: 'hash-limited', dailyLimitNano: FUNDS }));
        await first.addFunds(DEFAULT_ACCOUNT_ID, FUNDS, 'test');
        await body(first, second, async (text) => (await admin.query(text.replaceAll('$schema', schema))).rows);
      } finally {
        await Promise.all([first.close(), second.close()]);
      }
    }

    const hold = (index: number, estimatedCostNano = 0) =>
      sampleHold({ id: `rcpt_lease${String(index).padStart(8, '0')}`, amountNano: HOLD, owner: OWNER, expiresAt: LATER, estimatedCostNano });
    const receipt = (index: number, costNano: number) =>
      sampleReceipt({ id: `rcpt_lease${String(index).padStart(8, '0')}`, createdAt: `2026-11-21T10:00:0${index}.000Z`, holdNano: HOLD, costNano });

    async function assertBooks(store: Store, charged: number): Promise<void> {
      assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), FUNDS - charged, 'the balance less every receipt, to the nano');
      const totals = await store.ledgerTotals(DEFAULT_ACCOUNT_ID);
      assert.equal(totals.funds - totals.charges, FUNDS - charged);
      assert.equal((await store.accountSummary(DEFAULT_ACCOUNT_ID, MONTH)).monthChargedNano, charged);
    }

    test('holds and charges go through the lease, not the account row; the other process sees its reservation taken', async () => {
      await withTwoProcesses(async (first, second, sql) => {
        for (let index = 0; index < 10; index++) assert.deepEqual(await first.placeHold(hold(index), null), { placed: true });
        const [lease] = await sql('SELECT owner, granted_nano::int AS granted FROM $schema.balance_leases');
        assert.deepEqual(lease, { owner: OWNER, granted: LEASE });
        assert.equal((await sql('SELECT count(*)::int AS n FROM $schema.holds WHERE lease_id IS NOT NULL'))[0].n, 10);
        for (let index = 0; index < 10; index++) await first.recordReceipt(receipt(index, 300));
        assert.equal(
          (await sql("SELECT balance_nano::int AS b FROM $schema.accounts WHERE id = 'default'"))[0].b,
          FUNDS,
          'the account row untouched',
        );
        await assertBooks(first, 3_000);
        await assertBooks(second, 3_000);

        // Another process's hold outside a lease (a key with a daily limit) may use all but the lease.
        const refused = await second.placeHold(
          sampleHold({ id: 'rcpt_big', keyId: 'key_000000002bbbbbbbbbbbb', amountNano: FUNDS, owner: 'host/2/b' }),
          FUNDS,
        );
        assert.deepEqual(refused, { placed: false, reason: 'insufficient_balance', remainingNano: FUNDS - LEASE });

        // A sweep folds the charges into the account row; the next, finding the lease idle, hands it back.
        await first.extendHolds(OWNER, [], LATER);
        assert.equal((await sql("SELECT balance_nano::int AS b FROM $schema.accounts WHERE id = 'default'"))[0].b, FUNDS - 3_000);
        await assertBooks(second, 3_000);
        await first.extendHolds(OWNER, [], LATER);
        assert.deepEqual(await sql('SELECT id FROM $schema.balance_leases'), []);
        await assertBooks(second, 3_000);
        assert.deepEqual(await second.listHolds(DEFAULT_ACCOUNT_ID), []);
      });
    });

    test("a survivor recovers a dead process's lease and the holds in it, charging their estimates", async () => {
      await withTwoProcesses(async (first, second, sql) => {
        for (let index = 0; index < 5; index++) await first.placeHold(hold(index, 100), null);
        await first.recordReceipt(receipt(0, 300));
        await first.recordReceipt(receipt(1, 300));

        const released = await second.releaseOrphanedHolds(new Date().toISOString(), (owner) => owner === OWNER);
        assert.equal(released.length, 3);
        assert.ok(released.every((closed) => closed.status === 'failed' && closed.costNano === 100));
        assert.deepEqual(await sql('SELECT id FROM $schema.balance_leases'), [], 'the lease is gone');
        assert.deepEqual(await second.listHolds(DEFAULT_ACCOUNT_ID), []);
        await assertBooks(second, 900);
        // All of it is the account's again.
        const refused = await second.placeHold(
          sampleHold({ id: 'rcpt_big', keyId: 'key_000000002bbbbbbbbbbbb', amountNano: FUNDS, owner: 'host/2/b' }),
          FUNDS,
        );
        assert.deepEqual(refused, { placed: false, reason: 'insufficient_balance', remainingNano: FUNDS - 900 });
      });
    });

    test('a hold placed in a lease released meanwhile (its process stalled) is checked as any other', async () => {
      await withTwoProcesses(async (first, second, sql) => {
        await first.placeHold(hold(0), null);
        // Another process takes the lease back, as if this one had stopped renewing it.
        await second.releaseOrphanedHolds(new Date().toISOString(), (owner) => owner === OWNER);
        assert.deepEqual(await sql('SELECT id FROM $schema.balance_leases'), []);
        // This one still thinks it has room: the hold is written as an ordinary, checked hold.
        assert.deepEqual(await first.placeHold(hold(1), null), { placed: true });
        assert.deepEqual(await sql('SELECT id, lease_id FROM $schema.holds'), [{ id: hold(1).id, lease_id: null }]);
        await first.recordReceipt(receipt(1, 400));
        await assertBooks(second, 400);
      });
    });

    test('a hold whose settlement failed for good leaves the lease and is counted on its own', async () => {
      await withTwoProcesses(async (first, second, sql) => {
        await first.placeHold(hold(0), null);
        await first.placeHold(hold(1), null);
        const inLease = async () => (await sql('SELECT id FROM $schema.holds WHERE lease_id IS NOT NULL ORDER BY id')).map((row) => row.id);
        // Request 1 is still in flight; request 0 is not (its receipt could not be written).
        await first.extendHolds(OWNER, [hold(1).id], LATER);
        assert.deepEqual(await inLease(), [hold(0).id, hold(1).id], 'one sweep is not enough: the hold may be newer than its snapshot');
        await first.extendHolds(OWNER, [hold(1).id], LATER);
        assert.deepEqual(await inLease(), [hold(1).id]);
        // Counted on its own now, besides the lease, by every process.
        const refused = await second.placeHold(
          sampleHold({ id: 'rcpt_big', keyId: 'key_000000002bbbbbbbbbbbb', amountNano: FUNDS, owner: 'host/2/b' }),
          FUNDS,
        );
        assert.equal(refused.placed, false);
        assert.equal((refused as { remainingNano: number }).remainingNano, FUNDS - LEASE - HOLD);
        // It expires and is recovered as any other, its receipt charged to the account.
        const released = await second.releaseOrphanedHolds(new Date().toISOString(), (owner) => owner === OWNER);
        assert.ok(released.some((closed) => closed.id === hold(0).id));
        await assertBooks(second, 0);
      });
    });

    test('a process stopping cleanly hands its lease back, its charges folded into the account', async () => {
      await withTwoProcesses(async (first, second, sql) => {
        for (let index = 0; index < 3; index++) await first.placeHold(hold(index), null);
        for (let index = 0; index < 3; index++) await first.recordReceipt(receipt(index, 250));
        await first.close();
        assert.deepEqual(await sql('SELECT id FROM $schema.balance_leases'), []);
        assert.equal((await sql("SELECT balance_nano::int AS b FROM $schema.accounts WHERE id = 'default'"))[0].b, FUNDS - 750);
        await assertBooks(second, 750);
      });
    });

    test('no lease when the account cannot spare sixteen of them: holds are checked one by one, as without leases', async () => {
      await withTwoProcesses(async (first, second, sql) => {
        await first.setMonthlyBudget(DEFAULT_ACCOUNT_ID, 16 * LEASE - 1, 'test');
        assert.deepEqual(await first.placeHold(hold(0), null), { placed: true });
        assert.deepEqual(await sql('SELECT id FROM $schema.balance_leases'), []);
        assert.equal((await sql('SELECT count(*)::int AS n FROM $schema.holds WHERE lease_id IS NULL'))[0].n, 1);
        await first.recordReceipt(receipt(0, 300));
        await assertBooks(second, 300);
      });
    });

    describe('key leases (a key with a daily limit)', () => {
      const LIMITED = 'key_000000002bbbbbbbbbbbb';
      const limitedHold = (index: number) => ({ ...hold(index), keyId: LIMITED });
      const limitedReceipt = (index: number, costNano: number) => ({ ...receipt(index, costNano), keyId: LIMITED });

      test("far from its limit: holds go into a key lease; the key's day counts its reservation once, to the nano", async () => {
        await withTwoProcesses(async (first, second, sql) => {
          const limit = 2 * 16 * LEASE;
          for (let index = 0; index < 3; index++) assert.deepEqual(await first.placeHold(limitedHold(index), limit), { placed: true });
          const leases = await sql('SELECT key_id, day, granted_nano::int AS granted FROM $schema.balance_leases');
          assert.deepEqual(leases, [{ key_id: LIMITED, day: '2026-11-21', granted: LEASE }]);
          assert.equal((await sql('SELECT count(*)::int AS n FROM $schema.holds WHERE lease_id IS NOT NULL'))[0].n, 3);
          for (let index = 0; index < 3; index++) await first.recordReceipt(limitedReceipt(index, 300));
          assert.deepEqual(await second.keyDaySpend(LIMITED, '2026-11-21'), { chargedNano: 900, heldNano: 0 });
          // Another process's hold of that key, checked one by one: what the lease still reserves is taken.
          const big = sampleHold({ id: 'rcpt_big', keyId: LIMITED, amountNano: limit, owner: 'host/2/b' });
          assert.deepEqual(await second.placeHold(big, limit), { placed: false, reason: 'daily_limit', remainingNano: limit - LEASE });
          await assertBooks(second, 900);
          // Idle, it is handed back; then all of the day's remainder is there.
          await first.extendHolds(OWNER, [], LATER);
          await first.extendHolds(OWNER, [], LATER);
          assert.deepEqual(await sql('SELECT id FROM $schema.balance_leases'), []);
          const fits = sampleHold({ id: 'rcpt_fits', keyId: LIMITED, amountNano: limit - 900, owner: 'host/2/b' });
          assert.deepEqual(await second.placeHold(fits, limit), { placed: true });
          await assertBooks(second, 900);
        });
      });

      test('near its limit: no key lease, holds are checked one by one and the limit is exact', async () => {
        await withTwoProcesses(async (first, second, sql) => {
          const limit = 16 * LEASE - 1;
          assert.deepEqual(await first.placeHold(limitedHold(0), limit), { placed: true });
          assert.deepEqual(await sql('SELECT id FROM $schema.balance_leases WHERE key_id IS NOT NULL'), []);
          const rest = sampleHold({ id: 'rcpt_rest', keyId: LIMITED, amountNano: limit - HOLD + 1, owner: 'host/2/b' });
          assert.deepEqual(await second.placeHold(rest, limit), { placed: false, reason: 'daily_limit', remainingNano: limit - HOLD });
        });
      });

      test("a dead process's key lease: its holds recovered at their estimates and counted in the key's day", async () => {
        const journal = createMemoryHoldJournal();
        await withTwoProcesses(async (first, second, sql) => {
          const limit = 2 * 16 * LEASE;
          for (let index = 0; index < 3; index++) await first.placeHold({ ...limitedHold(index), estimatedCostNano: 100 }, limit);
          assert.equal(journal.size(), 3, 'journaled, as any lease hold');
          const released = await second.releaseOrphanedHolds(new Date().toISOString(), (owner) => owner === OWNER);
          assert.equal(released.length, 3);
          assert.deepEqual(await sql('SELECT id FROM $schema.balance_leases'), []);
          assert.deepEqual(await second.keyDaySpend(LIMITED, '2026-11-21'), { chargedNano: 300, heldNano: 0 });
          await assertBooks(second, 300);
        }, journal);
      });
    });

    describe('with a hold journal (Redis in production)', () => {
      const holdRows = async (sql: (text: string) => Promise<any[]>) =>
        (await sql('SELECT id, lease_id FROM $schema.holds ORDER BY id')).map((row) => [row.id, row.lease_id === null ? null : 'lease']);
      // A receipt's entry goes once its commit is on disk (postgres-durability.ts): a round trip after the receipt returns.
      const settledEntries = async (journal: { size(): number }) => {
        for (let tries = 0; tries < 500 && journal.size() > 0; tries++) await new Promise((resolve) => setTimeout(resolve, 10));
      };

      test('a hold in a fresh lease is one journal write and no row; its receipt removes the entry', async () => {
        const journal = createMemoryHoldJournal();
        await withTwoProcesses(async (first, second, sql) => {
          for (let index = 0; index < 3; index++) assert.deepEqual(await first.placeHold(hold(index), null), { placed: true });
          assert.deepEqual(await holdRows(sql), []);
          assert.equal(journal.size(), 3);
          // Every process counts them, as holds.
          assert.equal((await second.accountSummary(DEFAULT_ACCOUNT_ID, MONTH)).heldNano, 3 * HOLD);
          for (let index = 0; index < 3; index++) await first.recordReceipt(receipt(index, 300));
          await settledEntries(journal);
          assert.equal(journal.size(), 0);
          await assertBooks(second, 900);
          assert.deepEqual(await second.listHolds(DEFAULT_ACCOUNT_ID), []);
        }, journal);
      });

      test("a survivor adopts a dead process's journaled holds as it releases their lease: recovered at their estimates", async () => {
        const journal = createMemoryHoldJournal();
        await withTwoProcesses(async (first, second, sql) => {
          for (let index = 0; index < 5; index++) await first.placeHold(hold(index, 100), null);
          await first.recordReceipt(receipt(0, 300));
          const released = await second.releaseOrphanedHolds(new Date().toISOString(), (owner) => owner === OWNER);
          assert.deepEqual(
            released.map((closed) => [closed.id, closed.costNano]).sort(),
            [1, 2, 3, 4].map((index) => [hold(index).id, 100]),
          );
          assert.deepEqual(await sql('SELECT id FROM $schema.balance_leases'), []);
          assert.equal(journal.size(), 0);
          await assertBooks(second, 700);
          const refused = await second.placeHold(
            sampleHold({ id: 'rcpt_big', keyId: 'key_000000002bbbbbbbbbbbb', amountNano: FUNDS, owner: 'host/2/b' }),
            FUNDS,
          );
          assert.deepEqual(refused, { placed: false, reason: 'insufficient_balance', remainingNano: FUNDS - 700 });
        }, journal);
      });

      test('the journal down: holds take the database path, and no lease is released until it answers', async () => {
        const journal = createMemoryHoldJournal();
        await withTwoProcesses(async (first, second, sql) => {
          await first.placeHold(hold(0, 100), null);
          journal.up = false;
          await first.placeHold(hold(1, 100), null);
          assert.deepEqual(await holdRows(sql), [[hold(1).id, 'lease']], 'written to the database');
          const dead = (owner: string) => owner === OWNER;
          // The sweep fails, saying why, but only after recovering what needs no journal.
          await assert.rejects(second.releaseOrphanedHolds(new Date().toISOString(), dead), /journal down/);
          assert.equal((await sql('SELECT id FROM $schema.balance_leases')).length, 1, 'the lease keeps its room');
          assert.deepEqual(await holdRows(sql), [], 'the hold written to the database is recovered');
          await assertBooks(second, 100);
          journal.up = true;
          const released = await second.releaseOrphanedHolds(new Date().toISOString(), dead);
          assert.deepEqual(
            released.map((closed) => closed.id),
            [hold(0).id],
          );
          await assertBooks(second, 200);
        }, journal);
      });

      test('a journaled hold whose lease is gone becomes an ordinary hold at the next sweep of any process', async () => {
        const journal = createMemoryHoldJournal();
        await withTwoProcesses(async (first, second, sql) => {
          await first.placeHold(hold(0), null);
          // As if shrunk away while the request was in flight.
          await sql('DELETE FROM $schema.balance_leases');
          await second.releaseOrphanedHolds(new Date().toISOString(), () => false);
          assert.deepEqual(await holdRows(sql), [[hold(0).id, null]]);
          assert.equal(journal.size(), 0);
          await first.recordReceipt(receipt(0, 400));
          assert.deepEqual(await holdRows(sql), []);
          await assertBooks(second, 400);
        }, journal);
      });

      test('a lease past its half-life: the hold is written to the database, which decides', async () => {
        const journal = createMemoryHoldJournal();
        await withTwoProcesses(async (first, _second, sql) => {
          const soon = () => new Date(Date.now() + 200).toISOString();
          await first.placeHold({ ...hold(0), expiresAt: soon() }, null);
          assert.equal(journal.size(), 1);
          await new Promise((resolve) => setTimeout(resolve, 150));
          await first.placeHold({ ...hold(1), expiresAt: soon() }, null);
          assert.deepEqual(await holdRows(sql), [[hold(1).id, 'lease']]);
        }, journal);
      });

      test('a journaled hold whose settlement failed for good is adopted as an ordinary hold', async () => {
        const journal = createMemoryHoldJournal();
        await withTwoProcesses(async (first, _second, sql) => {
          await first.placeHold(hold(0), null);
          await first.placeHold(hold(1), null);
          await first.extendHolds(OWNER, [hold(1).id], LATER);
          await first.extendHolds(OWNER, [hold(1).id], LATER);
          assert.deepEqual(await holdRows(sql), [[hold(0).id, null]]);
          assert.equal(journal.size(), 1, 'the live one stays journaled');
        }, journal);
      });
    });
  });
}
