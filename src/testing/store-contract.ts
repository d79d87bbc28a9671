import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatUsd } from '../lib/money.ts';
import { DEFAULT_ACCOUNT_ID, type Store } from '../storage/store.ts';
import { describeReceiptContract } from './receipt-store-contract.ts';
import { OTHER_ACCOUNT, sampleKey, sampleReceipt, storeRunner } from './store-samples.ts';

export { asStored, sampleKey, sampleReceipt, storeRunner } from './store-samples.ts';

export function runStoreContract(name: string, makeStore: () => Promise<Store>): void {
  const withStore = storeRunner(makeStore);

  describe(`Store contract: ${name}`, () => {
    test('migrate is idempotent and leaves the default account at zero', () =>
      withStore(async (store) => {
        await store.migrate();
        assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 0);
        assert.deepEqual(await store.ledgerTotals(DEFAULT_ACCOUNT_ID), { funds: 0, charges: 0 });
        assert.equal(typeof (await store.keysChangeToken()), 'number');
      }));

    describe('api keys', () => {
      test('insert, find by hash, list newest first', () =>
        withStore(async (store) => {
          const older = sampleKey({ id: 'key_a', createdAt: '2025-01-01T00:00:00.000Z', scopes: ['inference', 'fix'] });
          const newer = sampleKey({
            id: 'key_b',
            createdAt: '2025-01-03T00:00:00.000Z',
            models: ['svc/fast', 'sim/sage'],
            dailyLimitNano: 2_500_000_001,
            rateLimitPerMinute: 30,
            expiresAt: '2026-01-01T00:00:00.000Z',
          });
          const middle = sampleKey({ id: 'key_c', createdAt: '2025-01-02T00:00:00.000Z' });
          for (const key of [older, newer, middle]) await store.insertKey(key);
          await store.insertKey(sampleKey({ id: 'key_elsewhere', accountId: OTHER_ACCOUNT }));

          assert.deepEqual(await store.findKeyByHash(newer.hash), newer);
          assert.deepEqual(await store.findKeyByHash(older.hash), older);
          assert.equal(await store.findKeyByHash('no-such-hash'), null);
          assert.deepEqual(
            (await store.listKeys(DEFAULT_ACCOUNT_ID)).map((key) => key.id),
            ['key_b', 'key_c', 'key_a'],
          );
          assert.deepEqual(
            (await store.listKeys(OTHER_ACCOUNT)).map((key) => key.id),
            ['key_elsewhere'],
          );
        }));

      test('a hash is unique', () =>
        withStore(async (store) => {
          await store.insertKey(sampleKey({ id: 'key_a', hash: 'same' }));
          await assert.rejects(store.insertKey(sampleKey({ id: 'key_b', hash: 'same' })));
        }));

      test('revoke by id writes the audit entry; a second revoke finds nothing', () =>
        withStore(async (store) => {
          const key = sampleKey({ id: 'key_a', prefix: 'svc_Revoke01' });
          await store.insertKey(key);
          const at = '2025-02-01T10:00:00.000Z';
          const revoked = await store.revokeKey(DEFAULT_ACCOUNT_ID, key.id, at, 'cli');
          assert.deepEqual(revoked, { ...key, revokedAt: at });
          assert.equal((await store.findKeyByHash(key.hash))?.revokedAt, at);

          const [entry] = await store.listAudit(DEFAULT_ACCOUNT_ID, 10);
          assert.ok(entry);
          assert.equal(entry.action, 'key.revoked');
          assert.equal(entry.actor, 'cli');
          assert.equal(entry.at, at);
          assert.equal(entry.accountId, DEFAULT_ACCOUNT_ID);
          assert.deepEqual(entry.detail, { keyId: key.id, prefix: key.prefix });

          assert.equal(await store.revokeKey(DEFAULT_ACCOUNT_ID, key.id, at, 'cli'), null);
          assert.equal((await store.listAudit(DEFAULT_ACCOUNT_ID, 10)).length, 1);
        }));

      test('revoke by display prefix; unknown or foreign keys give null', () =>
        withStore(async (store) => {
          const key = sampleKey({ id: 'key_a', prefix: 'svc_Prefix01' });
          await store.insertKey(key);
          assert.equal(await store.revokeKey(DEFAULT_ACCOUNT_ID, 'svc_Nothing0', '2025-02-01T00:00:00.000Z', 'cli'), null);
          assert.equal(await store.revokeKey(OTHER_ACCOUNT, key.prefix, '2025-02-01T00:00:00.000Z', 'cli'), null);
          const revoked = await store.revokeKey(DEFAULT_ACCOUNT_ID, key.prefix, '2025-02-01T00:00:00.000Z', 'admin');
          assert.equal(revoked?.id, key.id);
          assert.equal((await store.listKeys(DEFAULT_ACCOUNT_ID))[0]?.revokedAt, '2025-02-01T00:00:00.000Z');
        }));

      test('a prefix shared by two active keys is refused as ambiguous', () =>
        withStore(async (store) => {
          await store.insertKey(sampleKey({ id: 'key_a', prefix: 'svc_Shared01', hash: 'h1' }));
          await store.insertKey(sampleKey({ id: 'key_b', prefix: 'svc_Shared01', hash: 'h2' }));
          await assert.rejects(store.revokeKey(DEFAULT_ACCOUNT_ID, 'svc_Shared01', '2025-02-01T00:00:00.000Z', 'cli'), /ambiguous/);
          assert.ok((await store.listKeys(DEFAULT_ACCOUNT_ID)).every((key) => key.revokedAt === null));
          assert.deepEqual(await store.listAudit(DEFAULT_ACCOUNT_ID, 10), []);
          // The id still picks one out.
          assert.equal((await store.revokeKey(DEFAULT_ACCOUNT_ID, 'key_a', '2025-02-01T00:00:00.000Z', 'cli'))?.id, 'key_a');
        }));
    });

    describeReceiptContract(withStore);

    describe('money', () => {
      test('funds minus charges equals the balance', () =>
        withStore(async (store) => {
          await store.insertKey(sampleKey());
          assert.equal(await store.addFunds(DEFAULT_ACCOUNT_ID, 10_000_000_000, 'cli', 'first top-up'), 10_000_000_000);
          assert.equal(await store.addFunds(DEFAULT_ACCOUNT_ID, 1, 'cli'), 10_000_000_001);
          await store.recordReceipt(sampleReceipt({ id: 'rcpt_1', costNano: 345_678 }));
          await store.recordReceipt(sampleReceipt({ id: 'rcpt_2', costNano: 0 }));
          await store.recordReceipt(sampleReceipt({ id: 'rcpt_3', costNano: 1 }));

          const balance = await store.getBalance(DEFAULT_ACCOUNT_ID);
          const totals = await store.ledgerTotals(DEFAULT_ACCOUNT_ID);
          assert.deepEqual(totals, { funds: 10_000_000_001, charges: 345_679 });
          assert.equal(totals.funds - totals.charges, balance);
          assert.equal(balance, 9_999_654_322);

          const audit = await store.listAudit(DEFAULT_ACCOUNT_ID, 10);
          assert.deepEqual(
            audit.map((entry) => [entry.action, entry.actor, entry.detail]),
            [
              ['funds.added', 'cli', { amount: '0.000000001', note: null }],
              ['funds.added', 'cli', { amount: formatUsd(10_000_000_000), note: 'first top-up' }],
            ],
          );
        }));

      test('funds must be a positive whole number of nano-USD', () =>
        withStore(async (store) => {
          for (const bad of [0, -5, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1]) {
            await assert.rejects(store.addFunds(DEFAULT_ACCOUNT_ID, bad, 'cli'), RangeError, `accepted ${bad}`);
          }
          assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 0);
          assert.deepEqual(await store.listAudit(DEFAULT_ACCOUNT_ID, 10), []);
        }));

      test('funds never carry the balance past 2^53 - 1 nano-USD, even added at once', () =>
        withStore(async (store) => {
          await store.addFunds(DEFAULT_ACCOUNT_ID, 1_000_000_000_000, 'cli');
          const room = Number.MAX_SAFE_INTEGER - 1_000_000_000_000;
          await assert.rejects(store.addFunds(DEFAULT_ACCOUNT_ID, room + 1, 'cli'), RangeError);
          // Two adds that each fit, together too much: exactly one lands.
          const half = Math.floor(room / 2) + 1;
          const results = await Promise.allSettled([
            store.addFunds(DEFAULT_ACCOUNT_ID, half, 'cli'),
            store.addFunds(DEFAULT_ACCOUNT_ID, half, 'cli'),
          ]);
          assert.deepEqual(results.map((result) => result.status).sort(), ['fulfilled', 'rejected']);
          assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 1_000_000_000_000 + half);
          const totals = await store.ledgerTotals(DEFAULT_ACCOUNT_ID);
          assert.equal(totals.funds, 1_000_000_000_000 + half, 'the refused adds left no ledger entry');
          assert.equal((await store.listAudit(DEFAULT_ACCOUNT_ID, 10)).length, 2);
        }));

      test('a failed receipt write charges nothing', () =>
        withStore(async (store) => {
          await store.insertKey(sampleKey());
          await store.addFunds(DEFAULT_ACCOUNT_ID, 1_000_000, 'cli');
          await store.recordReceipt(sampleReceipt({ id: 'rcpt_1', costNano: 1_000 }));
          await assert.rejects(store.recordReceipt(sampleReceipt({ id: 'rcpt_2', costNano: -5_000 })));
          assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 999_000);
          assert.deepEqual(await store.ledgerTotals(DEFAULT_ACCOUNT_ID), { funds: 1_000_000, charges: 1_000 });
          assert.equal(await store.getReceipt(DEFAULT_ACCOUNT_ID, 'rcpt_2'), null);
        }));

      test('settling the same request twice leaves one receipt and one charge', () =>
        withStore(async (store) => {
          await store.insertKey(sampleKey());
          await store.addFunds(DEFAULT_ACCOUNT_ID, 1_000_000, 'cli');
          const receipt = sampleReceipt({ id: 'rcpt_1', costNano: 1_000 });
          // Once in sequence (a retry after a lost reply), twice at once (a retry racing the first).
          await store.recordReceipt(receipt);
          await Promise.all([store.recordReceipt(receipt), store.recordReceipt(receipt)]);
          assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 999_000);
          assert.deepEqual(await store.ledgerTotals(DEFAULT_ACCOUNT_ID), { funds: 1_000_000, charges: 1_000 });
          const page = await store.listReceipts(DEFAULT_ACCOUNT_ID, { limit: 10 });
          assert.deepEqual(
            page.data.map((stored) => stored.id),
            ['rcpt_1'],
          );
        }));

      test('large amounts round-trip as exact integers', () =>
        withStore(async (store) => {
          await store.insertKey(sampleKey());
          const big = 9_007_199_254_740_991 - 7; // just under 2^53: about 9 million USD
          await store.addFunds(DEFAULT_ACCOUNT_ID, big, 'cli');
          const receipt = sampleReceipt({ costNano: 123_456_789_123, holdNano: 987_654_321_987 });
          await store.recordReceipt(receipt);
          const stored = await store.getReceipt(DEFAULT_ACCOUNT_ID, receipt.id);
          assert.equal(stored?.costNano, 123_456_789_123);
          assert.equal(stored?.holdNano, 987_654_321_987);
          assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), big - 123_456_789_123);
          assert.ok(Number.isSafeInteger(await store.getBalance(DEFAULT_ACCOUNT_ID)));
        }));
    });

    describe('audit', () => {
      test('append and list newest first, per account, limited', () =>
        withStore(async (store) => {
          for (let index = 1; index <= 3; index++) {
            await store.appendAudit({
              accountId: DEFAULT_ACCOUNT_ID,
              at: `2025-01-0${index}T00:00:00.000Z`,
              actor: 'console',
              action: `test.${index}`,
              detail: { index, nested: { ok: true } },
            });
          }
          await store.appendAudit({ accountId: OTHER_ACCOUNT, at: '2025-01-01T00:00:00.000Z', actor: 'cli', action: 'other', detail: {} });
          const entries = await store.listAudit(DEFAULT_ACCOUNT_ID, 2);
          assert.deepEqual(
            entries.map((entry) => entry.action),
            ['test.3', 'test.2'],
          );
          assert.deepEqual(entries[0]?.detail, { index: 3, nested: { ok: true } });
          assert.equal(typeof entries[0]?.id, 'number');
          assert.deepEqual(
            (await store.listAudit(OTHER_ACCOUNT, 10)).map((entry) => entry.action),
            ['other'],
          );
        }));
    });
  });
}
