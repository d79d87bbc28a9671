import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { racingAddress, runConsoleStoreContract, sampleNonce } from '../../testing/console-store-contract.ts';
import { runFixStoreContract, sampleFixQuote, sampleFixRun } from '../../testing/fix-store-contract.ts';
import { createMemoryHoldJournal, runLedgerContract, sampleHold } from '../../testing/ledger-contract.ts';
import { runStoreContract, sampleKey, sampleReceipt } from '../../testing/store-contract.ts';
import { DEFAULT_ACCOUNT_ID, type Store } from '../store.ts';
import { BASELINE } from './migrations.ts';
import { poolSettings, redactedUrl } from './postgres-pool.ts';
import { createPostgresStore } from './postgres-store.ts';
import { statements } from './statements.ts';
import { holdToRow, receiptToRow } from '../row-mapping.ts';
import { PG_TEST_URL, postgresUnreachable, reportPostgresUnreachable, urlOnSchema } from '../../../test/helpers/postgres-test-connection.ts';
import { startTcpProxy } from '../../../test/helpers/tcp-proxy.ts';

const MONTH = '2026-11';
const DAY = '2026-11-21';

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

const unreachable = await postgresUnreachable();

if (unreachable !== null) {
  reportPostgresUnreachable('PostgreSQL store', unreachable);
} else {
  const admin = new pg.Pool({ connectionString: PG_TEST_URL, max: 2 });
  const schemas: string[] = [];

  /** A new empty schema, dropped when the file's tests end. */
  async function freshSchema(): Promise<string> {
    const schema = `gw_test_${randomBytes(6).toString('hex')}`;
    await admin.query(`CREATE SCHEMA ${schema}`);
    schemas.push(schema);
    return schema;
  }

  async function freshStore(): Promise<Store> {
    return createPostgresStore(urlOnSchema(await freshSchema()));
  }

  after(async () => {
    for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  runStoreContract('postgres', freshStore);
  runLedgerContract('postgres', freshStore);
  runFixStoreContract('postgres', freshStore);
  runConsoleStoreContract('postgres', freshStore);

  /** Two stores (two pools, as two gateway processes would have) on one fresh schema. */
  async function withTwoProcesses(body: (first: Store, second: Store, schema: string) => Promise<void>): Promise<void> {
    const schema = await freshSchema();
    const first = createPostgresStore(urlOnSchema(schema, { pool_max: '8' }));
    const second = createPostgresStore(urlOnSchema(schema, { pool_max: '8' }));
    try {
      await Promise.all([first.migrate(), second.migrate()]);
      await first.insertKey(sampleKey());
      await body(first, second, schema);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  }

  describe('postgres store', () => {
    test('several processes migrating one new schema at once all succeed, each migration once', async () => {
      const schema = await freshSchema();
      const stores = Array.from({ length: 4 }, () => createPostgresStore(urlOnSchema(schema)));
      try {
        await Promise.all(stores.map((store) => store.migrate()));
        const { rows } = await admin.query(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`);
        assert.deepEqual(
          rows.map((row) => row.version),
          [BASELINE.version],
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

    test('two processes placing 200 holds at once on one account never exceed the balance', () =>
      withTwoProcesses(async (first, second) => {
        await first.addFunds(DEFAULT_ACCOUNT_ID, 50_000, 'test');
        const decisions = await Promise.all(
          Array.from({ length: 200 }, (_, index) =>
            (index % 2 ? first : second).placeHold(sampleHold({ id: `rcpt_${index}`, amountNano: 1_000 }), null),
          ),
        );
        assert.equal(decisions.filter((decision) => decision.placed).length, 50);
        for (const decision of decisions) {
          if (!decision.placed) assert.equal(decision.reason, 'insufficient_balance');
        }
        const summary = await second.accountSummary(DEFAULT_ACCOUNT_ID, MONTH);
        assert.deepEqual([summary.heldNano, summary.holdCount, summary.balanceNano], [50_000, 50, 50_000]);
      }));

    test('two processes at once never pass the daily limit or the monthly budget', () =>
      withTwoProcesses(async (first, second) => {
        await first.addFunds(DEFAULT_ACCOUNT_ID, 10_000_000, 'test');
        const place = (prefix: string, count: number, dailyLimit: number | null, overrides = {}) =>
          Promise.all(
            Array.from({ length: count }, (_, index) =>
              (index % 2 ? first : second).placeHold(sampleHold({ id: `rcpt_${prefix}${index}`, amountNano: 1_000, ...overrides }), dailyLimit),
            ),
          );
        const daily = await place('d', 100, 30_000);
        assert.equal(daily.filter((decision) => decision.placed).length, 30);
        assert.deepEqual(await first.keyDaySpend('key_000000001aaaaaaaaaaaa', DAY), { chargedNano: 0, heldNano: 30_000 });

        await second.setMonthlyBudget(DEFAULT_ACCOUNT_ID, 45_000, 'test');
        const monthly = await place('m', 100, null, { day: '2026-11-22' });
        assert.equal(monthly.filter((decision) => decision.placed).length, 15);
        assert.equal((await first.accountSummary(DEFAULT_ACCOUNT_ID, MONTH)).monthHeldNano, 45_000);
      }));

    test('settling from two processes at once keeps funds - charges = balance and counts every charge', () =>
      withTwoProcesses(async (first, second) => {
        await first.addFunds(DEFAULT_ACCOUNT_ID, 1_000_000, 'test');
        const ids = Array.from({ length: 100 }, (_, index) => `rcpt_${index}`);
        await Promise.all(ids.map((id, index) => (index % 2 ? first : second).placeHold(sampleHold({ id, amountNano: 5_000 }), null)));
        await Promise.all(
          ids.map((id, index) =>
            (index % 2 ? second : first).recordReceipt(
              sampleReceipt({ id, keyId: 'key_000000001aaaaaaaaaaaa', holdNano: 5_000, costNano: 1_000 + index, createdAt: `${DAY}T10:00:00.000Z` }),
            ),
          ),
        );
        const charged = ids.reduce((sum, _id, index) => sum + 1_000 + index, 0);
        const totals = await second.ledgerTotals(DEFAULT_ACCOUNT_ID);
        assert.deepEqual(totals, { funds: 1_000_000, charges: charged });
        assert.equal(await first.getBalance(DEFAULT_ACCOUNT_ID), 1_000_000 - charged);
        const summary = await first.accountSummary(DEFAULT_ACCOUNT_ID, MONTH);
        assert.deepEqual([summary.holdCount, summary.monthChargedNano], [0, charged]);
        assert.deepEqual(await second.keyDaySpend('key_000000001aaaaaaaaaaaa', DAY), { chargedNano: charged, heldNano: 0 });
      }));

    test('two processes settling 300 receipts of one millisecond at once: each its own created_at, paged once each', () =>
      withTwoProcesses(async (first, second, schema) => {
        const ids = Array.from({ length: 300 }, (_, index) => `rcpt_${String(index).padStart(3, '0')}`);
        await Promise.all(
          ids.map((id, index) =>
            (index % 2 ? first : second).recordReceipt(sampleReceipt({ id, createdAt: `${DAY}T10:00:00.000Z`, costNano: index % 2 })),
          ),
        );
        const { rows } = await admin.query(
          `SELECT count(DISTINCT created_ns)::int AS distinct, min(created_ns)::text AS first, max(created_ns)::text AS last FROM ${schema}.receipts`,
        );
        const start = BigInt(Date.parse(`${DAY}T10:00:00.000Z`)) * 1_000_000n;
        assert.equal(rows[0].distinct, 300);
        assert.equal(rows[0].first, String(start));
        assert.ok(BigInt(rows[0].last) < start + 1_000_000n, 'all in the millisecond asked for');
        const seen: string[] = [];
        let before: string | undefined;
        for (;;) {
          const page = await (seen.length % 2 ? first : second).listReceipts(DEFAULT_ACCOUNT_ID, { limit: 30, before });
          seen.push(...page.data.map((receipt) => receipt.id));
          if (!page.hasMore) break;
          before = page.data.at(-1)!.createdAt;
        }
        assert.equal(seen.length, 300);
        assert.deepEqual([...seen].sort(), ids);
      }));

    test('two processes recovering at once close each orphaned hold exactly once', () =>
      withTwoProcesses(async (first, second, schema) => {
        await first.addFunds(DEFAULT_ACCOUNT_ID, 1_000_000, 'test');
        for (let index = 0; index < 20; index++) {
          await first.placeHold(sampleHold({ id: `rcpt_${index}`, owner: 'host/9/gone', expiresAt: `${DAY}T10:01:00.000Z` }), null);
        }
        await first.placeHold(sampleHold({ id: 'rcpt_live', owner: 'host/1/live', expiresAt: `${DAY}T11:00:00.000Z` }), null);
        const now = `${DAY}T10:30:00.000Z`;
        const [fromFirst, fromSecond] = await Promise.all([
          first.releaseOrphanedHolds(now, () => false),
          second.releaseOrphanedHolds(now, () => false),
        ]);
        const released = [...fromFirst, ...fromSecond].map((receipt) => receipt.id).sort();
        assert.deepEqual(released, Array.from({ length: 20 }, (_, index) => `rcpt_${index}`).sort());
        assert.deepEqual(
          (await second.listHolds(DEFAULT_ACCOUNT_ID)).map((hold) => hold.id),
          ['rcpt_live'],
        );
        const { rows } = await admin.query(`SELECT count(*)::int AS count FROM ${schema}.receipts WHERE status = 'failed' AND cost_nano = 0`);
        assert.equal(rows[0].count, 20);
        assert.equal(await first.getBalance(DEFAULT_ACCOUNT_ID), 1_000_000);
      }));

    test('two processes starting one quote at once: one run, one hold', () =>
      withTwoProcesses(async (first, second, schema) => {
        await first.addFunds(DEFAULT_ACCOUNT_ID, 1_000_000, 'test');
        await first.insertFixQuote(sampleFixQuote());
        const starts = await Promise.all(
          Array.from({ length: 16 }, (_, index) => {
            const run = sampleFixRun(`p${index}`);
            const hold = sampleHold({ id: run.receiptId, amountNano: run.maxCostNano });
            return (index % 2 ? first : second).startFixRun(run, hold, null);
          }),
        );
        assert.equal(starts.filter((start) => start.started).length, 1);
        assert.equal(starts.filter((start) => 'existing' in start).length, 15);
        const { rows } = await admin.query(
          `SELECT (SELECT count(*)::int FROM ${schema}.fix_runs) AS runs, (SELECT count(*)::int FROM ${schema}.holds) AS holds`,
        );
        assert.deepEqual(rows[0], { runs: 1, holds: 1 });
      }));

    test('finishing a run while another process recovers it: one of them settles it, no deadlock', () =>
      withTwoProcesses(async (first, second) => {
        await first.addFunds(DEFAULT_ACCOUNT_ID, 10_000_000, 'test');
        const finished: boolean[] = [];
        for (let index = 0; index < 20; index++) {
          const quote = sampleFixQuote({ id: `quote_r${index}` });
          await first.insertFixQuote(quote);
          const run = sampleFixRun(`r${index}`, { quoteId: quote.id });
          await first.startFixRun(run, sampleHold({ id: run.receiptId, amountNano: run.maxCostNano, owner: 'host/9/gone' }), null);
          const receipt = sampleReceipt({
            id: run.receiptId,
            keyId: run.keyId,
            holdNano: run.maxCostNano,
            costNano: 1_000,
            createdAt: `${DAY}T10:02:00.000Z`,
          });
          const [ended, released] = await Promise.all([
            first.finishFixRun(run.id, 'succeeded', { ok: true }, `${DAY}T10:02:00.000Z`, receipt),
            second.releaseOrphanedHolds(`${DAY}T10:03:00.000Z`, () => true),
          ]);
          assert.equal(ended, released.length === 0, 'exactly one of them settles the run');
          const status = (await second.getFixRun(DEFAULT_ACCOUNT_ID, run.id))?.status;
          assert.equal(status, ended ? 'succeeded' : 'failed');
          finished.push(ended);
        }
        const charged = finished.filter(Boolean).length * 1_000;
        assert.equal(await first.getBalance(DEFAULT_ACCOUNT_ID), 10_000_000 - charged);
        assert.deepEqual(await first.ledgerTotals(DEFAULT_ACCOUNT_ID), { funds: 10_000_000, charges: charged });
        assert.deepEqual(await second.listHolds(DEFAULT_ACCOUNT_ID), []);
      }));

    test('16 first sign-ins racing from two processes: exactly one owner, the others refused', () =>
      withTwoProcesses(async (first, second, schema) => {
        const at = '2026-11-21T10:00:00.000Z';
        const claims = await Promise.all(
          Array.from({ length: 16 }, (_, index) => (index % 2 ? first : second).claimMembership(DEFAULT_ACCOUNT_ID, racingAddress(index), at)),
        );
        const owners = claims.filter((claim) => claim !== null);
        assert.equal(owners.length, 1);
        assert.equal(owners[0]!.role, 'owner');
        const { rows } = await admin.query(
          `SELECT (SELECT count(*)::int FROM ${schema}.members) AS members, (SELECT count(*)::int FROM ${schema}.audit_log WHERE action = 'member.owner') AS audited`,
        );
        assert.deepEqual(rows[0], { members: 1, audited: 1 });
        assert.deepEqual(await second.claimMembership(DEFAULT_ACCOUNT_ID, owners[0]!.address, at), owners[0]);
      }));

    test('a sign-in nonce consumed by two processes at once: one of them gets it', () =>
      withTwoProcesses(async (first, second) => {
        for (let round = 0; round < 10; round++) {
          const nonce = sampleNonce({ nonce: `nonce_${round}` });
          await first.insertSignInNonce(nonce);
          const takes = await Promise.all(
            Array.from({ length: 8 }, (_, index) => (index % 2 ? first : second).consumeSignInNonce(nonce.nonce, '2026-11-21T10:05:00.000Z')),
          );
          assert.deepEqual(
            takes.filter((take) => take !== null),
            [nonce],
          );
        }
      }));

    test("changing a key's limits moves keysChangeToken for every process", () =>
      withTwoProcesses(async (server, cli) => {
        const before = await server.keysChangeToken();
        assert.ok(await cli.updateKeyLimits(DEFAULT_ACCOUNT_ID, sampleKey().id, { rateLimitPerMinute: 5 }, 'cli', '2026-11-21T10:00:00.000Z'));
        assert.notEqual(await server.keysChangeToken(), before);
      }));

    test('keysChangeToken moves when another process inserts or revokes a key, not on receipts', () =>
      withTwoProcesses(async (server, cli) => {
        const key = sampleKey({ id: 'key_watched', prefix: 'svc_Watched1', hash: 'hash-watched' });
        await cli.insertKey(key);
        const before = await server.keysChangeToken();
        await server.recordReceipt(sampleReceipt({ id: 'rcpt_1' }));
        await cli.recordReceipt(sampleReceipt({ id: 'rcpt_2', costNano: 0 }));
        assert.equal(await server.keysChangeToken(), before, 'receipts must not drop the key cache');

        assert.ok(await cli.revokeKey(DEFAULT_ACCOUNT_ID, key.prefix, '2025-02-01T00:00:00.000Z', 'cli'));
        const afterRevoke = await server.keysChangeToken();
        assert.notEqual(afterRevoke, before, 'a revocation by another process must be noticed');
        assert.equal((await server.findKeyByHash(key.hash))?.revokedAt, '2025-02-01T00:00:00.000Z');
        assert.equal(await server.keysChangeToken(), afterRevoke, 'stable until the next key change');

        assert.equal(await cli.revokeKey(DEFAULT_ACCOUNT_ID, key.prefix, '2025-02-01T00:00:00.000Z', 'cli'), null);
        assert.equal(await server.keysChangeToken(), afterRevoke, 'a revoke that found nothing changes nothing');
        await cli.insertKey(sampleKey({ id: 'key_new', hash: 'hash-new' }));
        assert.notEqual(await server.keysChangeToken(), afterRevoke);
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

    const settlementJson = (receipt: ReturnType<typeof sampleReceipt>, leaseId: string | null) => ({
      op: 'receipt',
      ...receiptToRow(receipt),
      touch_key: false,
      lease_id: leaseId,
    });

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
          (await client.query<{ created_ns: string }>(statements.recordLeaseReceipt(receipt, false, leaseId))).rows[0]!.created_ns;
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
        // Every way a receipt is settled: alone in a lease, alone outside one (gateway_insert_receipt), in batches with and without holds.
        const settleEveryWay = async () => {
          await client.query(statements.recordLeaseReceipt(next(), false, leaseId));
          await client.query(statements.recordReceipt(next(), false));
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

    test('close twice is harmless', async () => {
      const store = await freshStore();
      await store.close();
      await store.close();
    });
  });
}
