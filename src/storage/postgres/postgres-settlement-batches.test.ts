import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { createMemoryHoldJournal, sampleHold } from '../../testing/ledger-contract.ts';
import { sampleKey, sampleReceipt } from '../../testing/store-contract.ts';
import { DEFAULT_ACCOUNT_ID } from '../store.ts';
import { createPostgresStore } from './postgres-store.ts';
import { settlementJson as settlementOf, statements } from './statements.ts';
import { holdToRow } from '../row-mapping.ts';
import { PG_TEST_URL, urlOnSchema } from '../../../test/helpers/postgres-test-connection.ts';
import { onPostgres } from '../../testing/postgres-test-schemas.ts';
import { startTcpProxy } from '../../../test/helpers/tcp-proxy.ts';

const MONTH = '2026-11';
const DAY = '2026-11-21';

await onPostgres('postgres store: settlement batches, the hold journal and leases', ({ freshSchema }) => {
  describe('postgres store: settlement batches, the hold journal and leases', () => {
    test('a settlement whose flush cannot be confirmed is settled again: one receipt, one charge, its journal entry gone', async () => {
      const schema = await freshSchema();
      const proxy = await startTcpProxy(Number(new URL(PG_TEST_URL).port || 5432));
      const url = new URL(urlOnSchema(schema));
      url.port = String(proxy.port);
      const store = createPostgresStore(url.href);
      const journal = createMemoryHoldJournal();
      try {
        await store.migrate();
        store.useHoldJournal?.(journal);
        await store.insertKey(sampleKey());
        await store.addFunds(DEFAULT_ACCOUNT_ID, 10_000_000, 'test');
        assert.deepEqual(
          await store.placeHold(sampleHold({ id: 'rcpt_unflushed', amountNano: 1_000, expiresAt: '2099-01-01T00:00:00.000Z' }), null),
          { placed: true },
        );
        assert.equal(journal.size(), 1, 'journaled in its lease');
        const dropped = proxy.dropReplyTo('gateway_flush_barrier');
        await store.recordReceipt(sampleReceipt({ id: 'rcpt_unflushed', keyId: sampleKey().id, holdNano: 1_000, costNano: 900 }));
        await dropped;
        for (let tries = 0; tries < 500 && journal.size() > 0; tries++) await new Promise((resolve) => setTimeout(resolve, 10));
        assert.equal(journal.size(), 0, 'settled again, then its entry removed');
        assert.equal((await store.listReceipts(DEFAULT_ACCOUNT_ID, { limit: 10 })).data.length, 1);
        assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 10_000_000 - 900, 'charged once');
        const totals = await store.ledgerTotals(DEFAULT_ACCOUNT_ID);
        assert.equal(totals.funds - totals.charges, 10_000_000 - 900);
        assert.deepEqual(await store.listHolds(DEFAULT_ACCOUNT_ID), []);
      } finally {
        await store.close();
        await proxy.close();
      }
    });

    test('holds placed in one turn go to the journal in one put; when that put fails, each is written to the database', async () => {
      const schema = await freshSchema();
      const store = createPostgresStore(urlOnSchema(schema));
      const journal = createMemoryHoldJournal();
      const puts: number[] = [];
      let failPuts = false;
      const put = journal.put.bind(journal);
      journal.put = async (scope, owner, entries) => {
        puts.push(entries.size);
        if (failPuts) throw new Error('put lost');
        return put(scope, owner, entries);
      };
      try {
        await store.migrate();
        store.useHoldJournal?.(journal);
        await store.insertKey(sampleKey());
        await store.addFunds(DEFAULT_ACCOUNT_ID, 10_000_000, 'test');
        const later = '2099-01-01T00:00:00.000Z';
        const place = (id: string) => store.placeHold(sampleHold({ id, amountNano: 1_000, expiresAt: later }), null);
        // The first takes the lease; the next twenty find it there.
        assert.deepEqual(await place('rcpt_first'), { placed: true });
        puts.length = 0;
        const together = await Promise.all(Array.from({ length: 20 }, (_, index) => place(`rcpt_together${index}`)));
        assert.ok(together.every((decision) => decision.placed));
        assert.deepEqual(puts, [20], 'one put for the twenty');
        assert.equal(journal.size(), 21);

        failPuts = true;
        puts.length = 0;
        const fallen = await Promise.all(Array.from({ length: 5 }, (_, index) => place(`rcpt_fallen${index}`)));
        assert.ok(
          fallen.every((decision) => decision.placed),
          'placed by the database',
        );
        assert.deepEqual(puts, [5]);
        const held = (await store.listHolds(DEFAULT_ACCOUNT_ID)).map((hold) => hold.id);
        assert.equal(held.length, 26);
        for (let index = 0; index < 5; index++) assert.ok(held.includes(`rcpt_fallen${index}`));
        assert.equal((await store.accountSummary(DEFAULT_ACCOUNT_ID, MONTH)).heldNano, 26_000);
      } finally {
        await store.close();
      }
    });

    /** A fresh schema with a key, funds and a balance lease of process h/1/a; `client` is a connection of its own on it. */
    async function withLease(body: (client: pg.Client, leaseId: string, schema: string) => Promise<void>): Promise<void> {
      const schema = await freshSchema();
      const store = createPostgresStore(urlOnSchema(schema));
      const client = new pg.Client({ connectionString: urlOnSchema(schema) });
      try {
        await store.migrate();
        await store.insertKey(sampleKey());
        await store.addFunds(DEFAULT_ACCOUNT_ID, 1_000_000_000, 'test');
        await client.connect();
        const lease = await client.query<{ lease_id: string }>(
          statements.renewLease({
            leaseId: null,
            newId: 'lease_test',
            accountId: DEFAULT_ACCOUNT_ID,
            owner: 'h/1/a',
            month: MONTH,
            targetNano: 10_000_000,
            keepNano: 0,
            expiresAt: '2099-01-01T00:00:00.000Z',
            keyId: null,
            day: null,
            dailyLimitNano: null,
          }),
        );
        await body(client, lease.rows[0]!.lease_id, schema);
      } finally {
        await client.end().catch(() => undefined);
        await store.close();
      }
    }

    const settlementJson = (receipt: ReturnType<typeof sampleReceipt>, leaseId: string | null) => settlementOf(receipt, false, leaseId);

    test('a batch of settlements only: one receipt per id, lease charges to the lease, the rest to the account', () =>
      withLease(async (client, leaseId, schema) => {
        const at = `${DAY}T10:00:00.000Z`;
        const inLease = [1, 2, 3].map((index) => sampleReceipt({ id: `rcpt_s${index}`, createdAt: at, costNano: 100 * index }));
        const outside = sampleReceipt({ id: 'rcpt_outside', createdAt: at, costNano: 7 });
        const ops = [
          ...inLease.map((receipt) => settlementJson(receipt, leaseId)),
          settlementJson(outside, null),
          settlementJson(inLease[0]!, leaseId),
        ];
        const { rows } = await client.query<{ results: Array<{ created_ns: string }> }>('SELECT gateway_apply_batch($1::jsonb) AS results', [
          JSON.stringify(ops),
        ]);
        const created = rows[0]!.results.map((result) => result.created_ns);
        const start = BigInt(Date.parse(at)) * 1_000_000n;
        assert.deepEqual(
          created.slice(0, 4),
          [0n, 1n, 2n, 3n].map((tie) => String(start + tie)),
        );
        assert.equal(created[4], created[0], 'sent twice: the first one stands');
        const state = await client.query<{ receipts: number; leased: string; balance: string; key_day: string; month: string }>(
          `SELECT (SELECT count(*)::int FROM ${schema}.receipts) AS receipts,
                  (SELECT charged_nano::text FROM ${schema}.balance_leases WHERE id = $1) AS leased,
                  (SELECT balance_nano::text FROM ${schema}.accounts WHERE id = $2) AS balance,
                  (SELECT charged_nano::text FROM ${schema}.key_daily_spend WHERE day = $3) AS key_day,
                  (SELECT charged_nano::text FROM ${schema}.account_monthly_spend WHERE month = $4) AS month`,
          [leaseId, DEFAULT_ACCOUNT_ID, DAY, MONTH],
        );
        assert.deepEqual(state.rows[0], { receipts: 4, leased: '600', balance: String(1_000_000_000 - 7), key_day: '607', month: '7' });
      }));

    test('a settlement alone in a lease: one receipt and one charge when sent twice; the next of its millisecond after it; the account charged once its lease is gone', () =>
      withLease(async (client, leaseId, schema) => {
        const at = `${DAY}T11:00:00.000Z`;
        const first = sampleReceipt({ id: 'rcpt_alone1', createdAt: at, costNano: 40 });
        const second = sampleReceipt({ id: 'rcpt_alone2', createdAt: at, costNano: 2 });
        const settle = async (receipt: ReturnType<typeof sampleReceipt>) =>
          (await client.query<{ created_ns: string }>(statements.recordReceipt(settlementJson(receipt, leaseId)))).rows[0]!.created_ns;
        const start = BigInt(Date.parse(at)) * 1_000_000n;
        assert.equal(await settle(first), String(start));
        assert.equal(await settle(first), String(start), 'sent again: found, not written');
        assert.equal(await settle(second), String(start + 1n));
        await client.query(`DELETE FROM ${schema}.balance_leases WHERE id = $1`, [leaseId]);
        const third = sampleReceipt({ id: 'rcpt_alone3', createdAt: at, costNano: 5 });
        assert.equal(await settle(third), String(start + 2n));
        const state = await client.query<{ receipts: number; balance: string; key_day: string }>(
          `SELECT (SELECT count(*)::int FROM ${schema}.receipts) AS receipts,
                  (SELECT balance_nano::text FROM ${schema}.accounts WHERE id = $1) AS balance,
                  (SELECT charged_nano::text FROM ${schema}.key_daily_spend WHERE day = $2) AS key_day`,
          [DEFAULT_ACCOUNT_ID, DAY],
        );
        assert.deepEqual(state.rows[0], { receipts: 3, balance: String(1_000_000_000 - 5), key_day: '47' });
      }));

    test("a millisecond's last receipt is read from receipts_by_account_created, whatever receipts held when it was planned", async (t) =>
      withLease(async (client, leaseId, schema) => {
        let count = 0;
        const next = () =>
          sampleReceipt({ id: `rcpt_plan${count}`, createdAt: new Date(Date.UTC(2026, 10, 21, 12, 0, 0, count++)).toISOString(), costNano: 3 });
        // Every way a receipt is settled: alone in a lease, alone outside one, in batches with and without holds.
        const settleEveryWay = async () => {
          await client.query(statements.recordReceipt(settlementJson(next(), leaseId)));
          await client.query(statements.recordReceipt(settlementJson(next(), null)));
          await client.query({
            name: 'settlements',
            text: 'SELECT gateway_apply_batch($1::jsonb)',
            values: [JSON.stringify([settlementJson(next(), leaseId), settlementJson(next(), null)])],
          });
          const hold = { op: 'lease_hold', ...holdToRow(sampleHold({ id: `rcpt_held${count++}` })), lease_id: leaseId, daily_limit_nano: null };
          await client.query({
            name: 'with_hold',
            text: 'SELECT gateway_apply_batch($1::jsonb)',
            values: [JSON.stringify([settlementJson(next(), leaseId), hold])],
          });
        };
        // Planned while receipts is nearly empty: the plans this connection keeps (generic after five calls).
        for (let round = 0; round < 8; round++) await settleEveryWay();
        await client.query(
          `INSERT INTO ${schema}.receipts (id, request_id, account_id, key_id, key_prefix, created_at, created_ns, status, endpoint, stream, attempts,
             usage_estimated, hold_nano, cost_nano, latency_ms)
           SELECT 'rcpt_bulk' || g, 'req', $1, 'key_000000001aaaaaaaaaaaa', 'svc_x', '2026-11-20T00:00:00Z', 1763596800000000000 + g * 1000, 'succeeded',
             'chat.completions', false, '[]', false, 0, 0, 1
           FROM generate_series(1, 3000) AS g`,
          [DEFAULT_ACCOUNT_ID],
        );
        try {
          await client.query("LOAD 'auto_explain'");
        } catch (error) {
          t.skip(`auto_explain is not available: ${(error as Error).message}`);
          return;
        }
        const plans: string[] = [];
        client.on('notice', (notice) => plans.push(notice.message ?? ''));
        await client.query(
          "SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = 'notice'; SET client_min_messages = 'notice'",
        );
        await settleEveryWay();
        await client.query('RESET auto_explain.log_min_duration');
        const text = plans.join('\n');
        assert.match(text, /receipts_by_account_created/);
        assert.doesNotMatch(text, /receipts_by_key_created/);
      }));
  });
});
