import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { racingAddress, sampleNonce } from '../../testing/console-store-contract.ts';
import { sampleFixQuote, sampleFixRun } from '../../testing/fix-store-contract.ts';
import { sampleHold } from '../../testing/ledger-contract.ts';
import { sampleKey, sampleReceipt } from '../../testing/store-contract.ts';
import { DEFAULT_ACCOUNT_ID } from '../store.ts';
import { onPostgres } from '../../testing/postgres-test-schemas.ts';

const MONTH = '2026-11';
const DAY = '2026-11-21';

await onPostgres('postgres store: several processes at once', ({ admin, withTwoProcesses }) => {
  describe('postgres store: several processes at once', () => {
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
  });
});
