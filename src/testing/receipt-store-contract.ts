import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_ACCOUNT_ID, type Store } from '../storage/store.ts';
import { asStored, OTHER_ACCOUNT, sampleKey, sampleReceipt, withNanos } from './store-samples.ts';

/** The receipts part of the store contract: writing, reading, ordering and paging receipts. */
export function describeReceiptContract(withStore: (body: (store: Store) => Promise<void>) => Promise<void>): void {
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
        const ids = async (before: string) => (await store.listReceipts(DEFAULT_ACCOUNT_ID, { limit: 10, before })).data.map((receipt) => receipt.id);
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
}
