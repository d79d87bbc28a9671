import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatUsd } from '../lib/money.ts';
import type { ApiKeyRecord, ReceiptRecord } from '../storage/records.ts';
import { DEFAULT_ACCOUNT_ID, type Store } from '../storage/store.ts';

const OTHER_ACCOUNT = 'acct_other';

export function sampleKey(overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  const id = overrides.id ?? 'key_000000001aaaaaaaaaaaa';
  return {
    id,
    accountId: DEFAULT_ACCOUNT_ID,
    name: 'test key',
    prefix: `svc_${id.slice(-8)}`,
    hash: `hash-of-${id}`,
    scopes: ['inference'],
    models: null,
    dailyLimitNano: null,
    rateLimitPerMinute: null,
    expiresAt: null,
    revokedAt: null,
    createdAt: '2025-01-01T00:00:00.000Z',
    lastUsedAt: null,
    ...overrides,
  };
}

export function sampleReceipt(overrides: Partial<ReceiptRecord> = {}): ReceiptRecord {
  const id = overrides.id ?? 'rcpt_000000001aaaaaaaaaaaa';
  return {
    id,
    requestId: id.replace('rcpt_', 'req_'),
    accountId: DEFAULT_ACCOUNT_ID,
    keyId: 'key_000000001aaaaaaaaaaaa',
    keyPrefix: 'svc_aaaaaaaa',
    createdAt: '2025-01-02T00:00:00.000Z',
    status: 'succeeded',
    endpoint: '/v1/chat/completions',
    stream: true,
    requestedModel: 'svc/fast',
    answeringModel: 'sim/swift-mini',
    attempts: [
      { model: 'sim/steady', outcome: 'failed', errorCode: 'rate_limited', detail: '429 from upstream', latencyMs: 12 },
      { model: 'sim/swift-mini', outcome: 'succeeded', latencyMs: 340 },
    ],
    warnings: ['sim/swift-mini: top_k: an Anthropic field with no equivalent for this model; dropped'],
    usage: { inputTokens: 1200, cachedInputTokens: 200, cacheWriteTokens: 0, outputTokens: 300, reasoningTokens: 40 },
    usageEstimated: false,
    prices: {
      inputNanoPerMillion: 150_000_000,
      cachedInputNanoPerMillion: 75_000_000,
      cacheWriteNanoPerMillion: 150_000_000,
      outputNanoPerMillion: 600_000_000,
    },
    holdNano: 5_000_000,
    costNano: 345_000,
    latencyMs: 352,
    timeToFirstTokenMs: 180,
    errorCode: null,
    ...overrides,
  };
}

/**
 * The receipt as read back: its createdAt (milliseconds, as written) with nine fractional
 * digits, `tieBreak` nanoseconds past it when it is the (tieBreak + 1)-th of its millisecond.
 */
export function asStored(receipt: ReceiptRecord, tieBreak = 0): ReceiptRecord {
  return { ...receipt, createdAt: withNanos(receipt.createdAt, tieBreak) };
}

/** `2025-01-02T00:00:00.000Z` and 7: `2025-01-02T00:00:00.000000007Z`. */
function withNanos(millisecondInstant: string, nanos: number): string {
  assert.match(millisecondInstant, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  return `${millisecondInstant.slice(0, -1)}${String(nanos).padStart(6, '0')}Z`;
}

/**
 * The behaviour every Store backend must show. `makeStore` returns a fresh, empty store
 * (migrated or not); each test gets its own and closes it.
 */
/** Runs a test body on a fresh, migrated store and closes it after. */
export function storeRunner(makeStore: () => Promise<Store>) {
  return async function withStore(body: (store: Store) => Promise<void>): Promise<void> {
    const store = await makeStore();
    try {
      await store.migrate();
      await body(store);
    } finally {
      await store.close();
    }
  };
}

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

    describe('receipts', () => {
      test('record and get; another account sees nothing', () =>
        withStore(async (store) => {
          await store.insertKey(sampleKey());
          const full = sampleReceipt({ id: 'rcpt_full' });
          const bare = sampleReceipt({
            id: 'rcpt_bare',
            status: 'failed',
            stream: false,
            requestedModel: null,
            answeringModel: null,
            attempts: [],
            usage: null,
            usageEstimated: true,
            prices: null,
            holdNano: 0,
            costNano: 0,
            latencyMs: 3.25,
            timeToFirstTokenMs: null,
            errorCode: 'no_candidates',
          });
          await store.recordReceipt(full);
          await store.recordReceipt(bare);
          // Same millisecond: the second written is a nanosecond later.
          assert.deepEqual(await store.getReceipt(DEFAULT_ACCOUNT_ID, full.id), asStored(full));
          assert.deepEqual(await store.getReceipt(DEFAULT_ACCOUNT_ID, bare.id), asStored(bare, 1));
          assert.equal(await store.getReceipt(OTHER_ACCOUNT, full.id), null);
          assert.equal(await store.getReceipt(DEFAULT_ACCOUNT_ID, 'rcpt_missing'), null);
        }));

      test('list newest first with limit, exclusive before and hasMore', () =>
        withStore(async (store) => {
          await store.insertKey(sampleKey());
          await store.insertKey(sampleKey({ id: 'key_other', hash: 'other', accountId: OTHER_ACCOUNT }));
          const times = [
            '2025-01-01T00:00:01.000Z',
            '2025-01-01T00:00:03.000Z',
            '2025-01-01T00:00:02.000Z',
            '2025-01-01T00:00:03.000Z',
            '2025-01-01T00:00:04.000Z',
          ];
          const ids = ['rcpt_1', 'rcpt_2', 'rcpt_3', 'rcpt_4', 'rcpt_5'];
          for (const [index, id] of ids.entries()) await store.recordReceipt(sampleReceipt({ id, createdAt: times[index]!, costNano: 0 }));
          await store.recordReceipt(
            sampleReceipt({ id: 'rcpt_9', accountId: OTHER_ACCOUNT, keyId: 'key_other', createdAt: '2025-01-01T00:00:09.000Z' }),
          );

          const everything = await store.listReceipts(DEFAULT_ACCOUNT_ID, { limit: 10 });
          // Same millisecond: the one written later comes first.
          assert.deepEqual(
            everything.data.map((receipt) => receipt.id),
            ['rcpt_5', 'rcpt_4', 'rcpt_2', 'rcpt_3', 'rcpt_1'],
          );
          assert.equal(everything.hasMore, false);

          const exact = await store.listReceipts(DEFAULT_ACCOUNT_ID, { limit: 5 });
          assert.equal(exact.hasMore, false);

          const first = await store.listReceipts(DEFAULT_ACCOUNT_ID, { limit: 2 });
          assert.deepEqual(
            first.data.map((receipt) => receipt.id),
            ['rcpt_5', 'rcpt_4'],
          );
          assert.equal(first.hasMore, true);

          const next = await store.listReceipts(DEFAULT_ACCOUNT_ID, { limit: 2, before: '2025-01-01T00:00:03.000Z' });
          assert.deepEqual(
            next.data.map((receipt) => receipt.id),
            ['rcpt_3', 'rcpt_1'],
          );
          assert.equal(next.hasMore, false);

          const none = await store.listReceipts(DEFAULT_ACCOUNT_ID, { limit: 2, before: '2025-01-01T00:00:01.000Z' });
          assert.deepEqual(none, { data: [], hasMore: false });

          assert.deepEqual(
            (await store.listReceipts(OTHER_ACCOUNT, { limit: 10 })).data.map((receipt) => receipt.id),
            ['rcpt_9'],
          );
        }));

      test('receipts written at once in one millisecond: distinct created_at in order, before=created_at pages each once', () =>
        withStore(async (store) => {
          await store.insertKey(sampleKey());
          await store.insertKey(sampleKey({ id: 'key_other', hash: 'other', accountId: OTHER_ACCOUNT }));
          const millisecond = '2025-01-01T00:00:00.005Z';
          const ids = Array.from({ length: 40 }, (_, index) => `rcpt_${String(index).padStart(2, '0')}`);
          // All at once: on PostgreSQL these are concurrent transactions on several connections.
          await Promise.all([
            ...ids.map((id, index) => store.recordReceipt(sampleReceipt({ id, createdAt: millisecond, costNano: index % 3 }))),
            store.recordReceipt(sampleReceipt({ id: 'rcpt_before', createdAt: '2025-01-01T00:00:00.004Z', costNano: 0 })),
            store.recordReceipt(sampleReceipt({ id: 'rcpt_after', createdAt: '2025-01-01T00:00:00.006Z', costNano: 0 })),
            store.recordReceipt(sampleReceipt({ id: 'rcpt_elsewhere', accountId: OTHER_ACCOUNT, keyId: 'key_other', createdAt: millisecond })),
          ]);

          const all = (await store.listReceipts(DEFAULT_ACCOUNT_ID, { limit: 100 })).data;
          assert.equal(all.length, 42);
          assert.deepEqual([all[0]!.id, all.at(-1)!.id], ['rcpt_after', 'rcpt_before']);
          const instants = all.map((receipt) => receipt.createdAt);
          for (const [index, instant] of instants.entries()) {
            assert.match(instant, /^2025-01-01T00:00:00\.00[456]\d{6}Z$/, 'nine digits, in the millisecond asked for');
            if (index > 0) assert.ok(instant < instants[index - 1]!, `${instant} strictly older than ${instants[index - 1]}`);
          }
          assert.equal(instants.slice(1, -1).sort()[0], withNanos(millisecond, 0), 'the first written takes the millisecond itself');
          assert.deepEqual(await store.getReceipt(DEFAULT_ACCOUNT_ID, all[1]!.id), all[1], 'read alone, the same instant');
          assert.equal((await store.getReceipt(OTHER_ACCOUNT, 'rcpt_elsewhere'))?.createdAt, withNanos(millisecond, 0), 'per account');

          // A client passes the last created_at as before: every receipt once, has_more exact (42 = 6 x 7: no empty last page).
          const seen: string[] = [];
          let before: string | undefined;
          for (let pages = 1; ; pages++) {
            const page = await store.listReceipts(DEFAULT_ACCOUNT_ID, { limit: 7, before });
            seen.push(...page.data.map((receipt) => receipt.id));
            assert.equal(page.data.length, 7);
            assert.equal(page.hasMore, pages < 6, `page ${pages}`);
            if (!page.hasMore) break;
            before = page.data.at(-1)!.createdAt;
          }
          assert.deepEqual(
            seen,
            all.map((receipt) => receipt.id),
          );
        }));

      test('before takes any ISO 8601 instant: fewer digits, an offset, far past or future', () =>
        withStore(async (store) => {
          await store.insertKey(sampleKey());
          for (const [id, createdAt] of [
            ['rcpt_1', '2025-01-01T00:00:00.001Z'],
            ['rcpt_2', '2025-01-01T00:00:00.002Z'],
            ['rcpt_3', '2025-01-01T00:00:00.002Z'],
          ] as const) {
            await store.recordReceipt(sampleReceipt({ id, createdAt, costNano: 0 }));
          }
          const ids = async (before: string) =>
            (await store.listReceipts(DEFAULT_ACCOUNT_ID, { limit: 10, before })).data.map((receipt) => receipt.id);
          assert.deepEqual(await ids('2025-01-01T00:00:00.002Z'), ['rcpt_1'], 'a millisecond: before all of it');
          assert.deepEqual(await ids('2025-01-01T00:00:00.002000001Z'), ['rcpt_2', 'rcpt_1']);
          assert.deepEqual(await ids('2025-01-01T01:00:00.002000002+01:00'), ['rcpt_3', 'rcpt_2', 'rcpt_1']);
          assert.deepEqual(await ids('2025-01-01T00:00:00.00Z'), []);
          assert.deepEqual(await ids('9999-12-31T23:59:59.999999999Z'), ['rcpt_3', 'rcpt_2', 'rcpt_1'], 'beyond 64 bits of nanoseconds');
          assert.deepEqual(await ids('1000-01-01'), []);
          await assert.rejects(store.listReceipts(DEFAULT_ACCOUNT_ID, { limit: 10, before: 'yesterday' }), RangeError);
        }));

      test('a receipt closed by recovery takes the next free instant of its millisecond, and says so', () =>
        withStore(async (store) => {
          await store.insertKey(sampleKey());
          const at = '2025-01-01T00:00:00.007Z';
          await store.recordReceipt(sampleReceipt({ id: 'rcpt_settled', createdAt: at, costNano: 0 }));
          const hold = {
            id: 'rcpt_orphan',
            requestId: 'req_orphan',
            accountId: DEFAULT_ACCOUNT_ID,
            keyId: sampleKey().id,
            keyPrefix: sampleKey().prefix,
            endpoint: 'chat.completions',
            stream: false,
            requestedModel: 'svc/fast',
            amountNano: 0,
            day: '2025-01-01',
            month: '2025-01',
            createdAt: at,
            owner: 'host/1/gone',
            expiresAt: '2025-01-01T00:01:00.000Z',
          };
          assert.deepEqual(await store.placeHold(hold, null), { placed: true });
          const [released] = await store.releaseOrphanedHolds('2025-01-01T00:02:00.000Z', () => true);
          assert.equal(released?.createdAt, withNanos(at, 1), 'the recovered receipt says where it was stored');
          assert.deepEqual(await store.getReceipt(DEFAULT_ACCOUNT_ID, 'rcpt_orphan'), released);
          assert.deepEqual(
            (await store.listReceipts(DEFAULT_ACCOUNT_ID, { limit: 10 })).data.map((receipt) => [receipt.id, receipt.createdAt]),
            [
              ['rcpt_orphan', withNanos(at, 1)],
              ['rcpt_settled', withNanos(at, 0)],
            ],
          );
        }));

      test('recording a receipt marks its key used, never moving backwards', () =>
        withStore(async (store) => {
          const key = sampleKey();
          await store.insertKey(key);
          await store.recordReceipt(sampleReceipt({ id: 'rcpt_1', createdAt: '2025-03-01T00:00:00.000Z' }));
          assert.equal((await store.findKeyByHash(key.hash))?.lastUsedAt, '2025-03-01T00:00:00.000Z');
          await store.recordReceipt(sampleReceipt({ id: 'rcpt_0', createdAt: '2025-02-01T00:00:00.000Z' }));
          assert.equal((await store.findKeyByHash(key.hash))?.lastUsedAt, '2025-03-01T00:00:00.000Z');
        }));
    });

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
