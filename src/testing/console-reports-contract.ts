import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ReceiptRecord } from '../storage/records.ts';
import { DEFAULT_ACCOUNT_ID, type Store } from '../storage/store.ts';
import { DAY, MEMBER, OWNER } from './console-samples.ts';
import { asStored, OTHER_ACCOUNT, sampleKey, sampleReceipt } from './store-samples.ts';

type WithStore = (body: (store: Store) => Promise<void>) => Promise<void>;

/** Receipts of the default account (and one of another) at known times, models, keys and statuses. */
async function seedReceipts(store: Store): Promise<ReceiptRecord[]> {
  await store.insertKey(sampleKey());
  await store.insertKey(sampleKey({ id: 'key_b', hash: 'hash-b' }));
  await store.insertKey(sampleKey({ id: 'key_other', hash: 'hash-other', accountId: OTHER_ACCOUNT }));
  const receipts = [
    sampleReceipt({ id: 'rcpt_01', createdAt: `${DAY}T09:59:59.999Z`, costNano: 1 }),
    sampleReceipt({ id: 'rcpt_02', createdAt: `${DAY}T10:00:00.000Z`, costNano: 10, keyId: 'key_b' }),
    sampleReceipt({ id: 'rcpt_03', createdAt: `${DAY}T10:30:00.000Z`, costNano: 100, status: 'failed', answeringModel: null, usage: null }),
    sampleReceipt({ id: 'rcpt_04', createdAt: `${DAY}T10:59:59.999Z`, costNano: 1_000, endpoint: '/v1/messages', answeringModel: 'sim/sage' }),
    sampleReceipt({ id: 'rcpt_05', createdAt: `${DAY}T11:00:00.000Z`, costNano: 10_000, keyId: 'key_b', status: 'cancelled' }),
    sampleReceipt({
      id: 'rcpt_06',
      createdAt: '2026-11-22T00:00:00.000Z',
      costNano: 100_000,
      requestedModel: null,
      answeringModel: null,
      status: 'failed',
      errorCode: 'provider_unavailable',
    }),
    sampleReceipt({ id: 'rcpt_07', createdAt: '2026-11-22T23:59:59.999Z', costNano: 9_007_199_254_000, answeringModel: 'sim/sage' }),
  ];
  for (const receipt of receipts) await store.recordReceipt(receipt);
  await store.recordReceipt(sampleReceipt({ id: 'rcpt_x', accountId: OTHER_ACCOUNT, keyId: 'key_other', createdAt: `${DAY}T10:00:00.000Z` }));
  return receipts;
}

async function search(store: Store, filter: Parameters<Store['searchReceipts']>[1]['filter']): Promise<string[]> {
  return (await store.searchReceipts(DEFAULT_ACCOUNT_ID, { limit: 100, filter })).data.map((receipt) => receipt.id);
}

/** The console's reports every Store backend must show: key writes, receipt search, spend series, usage, funds. */
export function describeConsoleReportsContract(run: WithStore): void {
  test('insertKey with an actor writes key.created; without one (the CLI) nothing', () =>
    run(async (store) => {
      await store.insertKey(sampleKey({ id: 'key_cli', hash: 'hash-cli' }));
      const key = sampleKey({ id: 'key_console', hash: 'hash-console', name: 'ci', scopes: ['inference', 'fix'], models: ['svc/fast'] });
      await store.insertKey(key, OWNER);
      const entries = await store.listAudit(DEFAULT_ACCOUNT_ID, 10);
      assert.equal(entries.length, 1);
      assert.deepEqual(
        { ...entries[0], id: 0 },
        {
          id: 0,
          accountId: DEFAULT_ACCOUNT_ID,
          at: key.createdAt,
          actor: OWNER,
          action: 'key.created',
          detail: { keyId: key.id, prefix: key.prefix, name: 'ci', scopes: ['inference', 'fix'], models: ['svc/fast'] },
        },
      );
      await assert.rejects(store.insertKey(sampleKey({ id: 'key_dup', hash: 'hash-console' }), OWNER));
      assert.equal((await store.listAudit(DEFAULT_ACCOUNT_ID, 10)).length, 1, 'a key refused writes no audit entry');
    }));

  test('updateKeyLimits changes the fields given, leaves absent ones, null removes; audited', () =>
    run(async (store) => {
      const key = sampleKey({ dailyLimitNano: 5_000_000_000, rateLimitPerMinute: 60 });
      await store.insertKey(key);
      const at = `${DAY}T12:00:00.000Z`;
      const daily = await store.updateKeyLimits(DEFAULT_ACCOUNT_ID, key.id, { dailyLimitNano: 2_500_000_001 }, OWNER, at);
      assert.deepEqual(daily, { ...key, dailyLimitNano: 2_500_000_001 });
      assert.deepEqual(await store.findKeyByHash(key.hash), daily);
      const rate = await store.updateKeyLimits(DEFAULT_ACCOUNT_ID, key.id, { rateLimitPerMinute: null }, MEMBER, at);
      assert.deepEqual(rate, { ...key, dailyLimitNano: 2_500_000_001, rateLimitPerMinute: null });
      const both = await store.updateKeyLimits(DEFAULT_ACCOUNT_ID, key.id, { dailyLimitNano: null, rateLimitPerMinute: 7 }, OWNER, at);
      assert.deepEqual([both?.dailyLimitNano, both?.rateLimitPerMinute], [null, 7]);

      const entries = await store.listAudit(DEFAULT_ACCOUNT_ID, 10);
      assert.deepEqual(
        entries.map((entry) => [entry.action, entry.actor, entry.at]),
        [
          ['key.limits', OWNER, at],
          ['key.limits', MEMBER, at],
          ['key.limits', OWNER, at],
        ],
      );
      assert.deepEqual(entries.map((entry) => entry.detail).reverse(), [
        { keyId: key.id, prefix: key.prefix, dailyLimit: '2.500000001', rateLimitPerMinute: 60, before: { dailyLimit: '5.000000000' } },
        { keyId: key.id, prefix: key.prefix, dailyLimit: '2.500000001', rateLimitPerMinute: null, before: { rateLimitPerMinute: 60 } },
        {
          keyId: key.id,
          prefix: key.prefix,
          dailyLimit: null,
          rateLimitPerMinute: 7,
          before: { dailyLimit: '2.500000001', rateLimitPerMinute: null },
        },
      ]);

      assert.equal(await store.updateKeyLimits(DEFAULT_ACCOUNT_ID, 'key_missing', { rateLimitPerMinute: 1 }, OWNER, at), null);
      assert.equal(await store.updateKeyLimits(OTHER_ACCOUNT, key.id, { rateLimitPerMinute: 1 }, OWNER, at), null);
      await assert.rejects(store.updateKeyLimits(DEFAULT_ACCOUNT_ID, key.id, { dailyLimitNano: 1.5 }, OWNER, at), RangeError);
      await assert.rejects(store.updateKeyLimits(DEFAULT_ACCOUNT_ID, key.id, { rateLimitPerMinute: 0 }, OWNER, at), RangeError);
      assert.equal((await store.listAudit(DEFAULT_ACCOUNT_ID, 10)).length, 3);

      const renamed = await store.updateKeyLimits(DEFAULT_ACCOUNT_ID, key.id, { name: 'laptop', models: ['svc/fast', 'sim/sage'] }, OWNER, at);
      assert.deepEqual([renamed?.name, renamed?.models, renamed?.rateLimitPerMinute], ['laptop', ['svc/fast', 'sim/sage'], 7]);
      assert.deepEqual(await store.findKeyByHash(key.hash), renamed);
      const [edited] = await store.listAudit(DEFAULT_ACCOUNT_ID, 1);
      assert.equal(edited!.action, 'key.updated');
      assert.deepEqual(edited!.detail.before, { name: key.name, models: key.models });
      const everyModel = await store.updateKeyLimits(DEFAULT_ACCOUNT_ID, key.id, { models: null }, OWNER, at);
      assert.equal(everyModel?.models, null);
      await assert.rejects(store.updateKeyLimits(DEFAULT_ACCOUNT_ID, key.id, { models: [] }, OWNER, at), RangeError);
      await assert.rejects(store.updateKeyLimits(DEFAULT_ACCOUNT_ID, key.id, { name: ' ' }, OWNER, at), RangeError);
    }));

  test('searchReceipts: each filter, ANDed; another account never shows', () =>
    run(async (store) => {
      const receipts = await seedReceipts(store);
      const all = receipts.map((receipt) => receipt.id).reverse();
      assert.deepEqual(await search(store, undefined), all);
      assert.deepEqual(await search(store, {}), all);
      assert.deepEqual(await search(store, { keyId: 'key_b' }), ['rcpt_05', 'rcpt_02']);
      assert.deepEqual(await search(store, { model: 'sim/sage' }), ['rcpt_07', 'rcpt_04']);
      assert.deepEqual(
        await search(store, { model: 'svc/fast' }),
        ['rcpt_07', 'rcpt_05', 'rcpt_04', 'rcpt_03', 'rcpt_02', 'rcpt_01'],
        'requested model',
      );
      assert.deepEqual(await search(store, { status: 'failed' }), ['rcpt_06', 'rcpt_03']);
      assert.deepEqual(await search(store, { requestedModel: 'svc/fast' }), ['rcpt_07', 'rcpt_05', 'rcpt_04', 'rcpt_03', 'rcpt_02', 'rcpt_01']);
      assert.deepEqual(await search(store, { requestedModel: 'sim/sage' }), [], 'the alias asked for, not the answering model');
      assert.deepEqual(await search(store, { errorCode: 'provider_unavailable' }), ['rcpt_06']);
      assert.deepEqual(await search(store, { errorCode: 'provider_unavailable', status: 'succeeded' }), []);
      assert.deepEqual(await search(store, { endpoint: '/v1/messages' }), ['rcpt_04']);
      assert.deepEqual(await search(store, { from: `${DAY}T10:00:00.000Z`, to: `${DAY}T11:00:00.000Z` }), ['rcpt_04', 'rcpt_03', 'rcpt_02']);
      assert.deepEqual(await search(store, { from: '2026-11-22T00:00:00.000Z' }), ['rcpt_07', 'rcpt_06']);
      assert.deepEqual(await search(store, { to: `${DAY}T10:00:00.000Z` }), ['rcpt_01']);
      assert.deepEqual(
        await search(store, { keyId: 'key_000000001aaaaaaaaaaaa', model: 'svc/fast', status: 'succeeded', from: `${DAY}T10:00:00.000Z` }),
        ['rcpt_07', 'rcpt_04'],
      );
      assert.deepEqual(await search(store, { keyId: 'key_b', status: 'failed' }), []);
      assert.deepEqual(await search(store, { keyId: 'key_other' }), []);
      const page = await store.searchReceipts(DEFAULT_ACCOUNT_ID, { limit: 2, filter: { keyId: 'key_b' } });
      assert.deepEqual(page.data, [asStored(receipts[4]!), asStored(receipts[1]!)], 'whole receipts');
      assert.equal(page.hasMore, false, 'exactly limit rows left: no more');
      await assert.rejects(store.searchReceipts(DEFAULT_ACCOUNT_ID, { limit: 0 }), RangeError);
    }));

  test('searchReceipts: a cursor walk sees every receipt once, those of one millisecond in the order written', () =>
    run(async (store) => {
      await store.insertKey(sampleKey());
      // 23 receipts over 8 milliseconds, three to one, written out of order.
      const written = [...Array(23).keys()].sort((a, b) => ((a * 7) % 23) - ((b * 7) % 23));
      for (const index of written) {
        const createdAt = `${DAY}T10:00:00.00${Math.floor(index / 3)}Z`;
        await store.recordReceipt(
          sampleReceipt({ id: `rcpt_${String(index).padStart(2, '0')}`, createdAt, costNano: 0, status: index % 2 ? 'failed' : 'succeeded' }),
        );
      }
      const newestFirst = written
        .map((index, position) => ({ index, position }))
        .sort((a, b) => Math.floor(b.index / 3) - Math.floor(a.index / 3) || b.position - a.position);
      const expected = newestFirst.map(({ index }) => `rcpt_${String(index).padStart(2, '0')}`);

      for (const [limit, filter, ids] of [
        [4, {}, expected],
        [1, {}, expected],
        [3, { status: 'failed' as const }, expected.filter((id) => Number(id.slice(5)) % 2 === 1)],
      ] as const) {
        const seen: string[] = [];
        let cursor: { createdAt: string } | undefined;
        for (let pages = 0; pages < 30; pages++) {
          const page = await store.searchReceipts(DEFAULT_ACCOUNT_ID, { limit, cursor, filter });
          seen.push(...page.data.map((receipt) => receipt.id));
          assert.ok(page.data.length <= limit);
          if (!page.hasMore) break;
          cursor = { createdAt: page.data.at(-1)!.createdAt };
        }
        assert.deepEqual(seen, ids, `pages of ${limit}`);
      }
    }));

  test('spendSeries: UTC hour and day buckets over [from, to), exact sums, empty buckets left out', () =>
    run(async (store) => {
      await seedReceipts(store);
      const hours = await store.spendSeries(DEFAULT_ACCOUNT_ID, { from: `${DAY}T10:00:00.000Z`, to: '2026-11-22T23:59:59.999Z', bucket: 'hour' });
      assert.deepEqual(hours, [
        { start: `${DAY}T10:00:00.000Z`, costNano: 1_110, requests: 3, errors: 1 },
        { start: `${DAY}T11:00:00.000Z`, costNano: 10_000, requests: 1, errors: 0 },
        { start: '2026-11-22T00:00:00.000Z', costNano: 100_000, requests: 1, errors: 1 },
      ]);
      const days = await store.spendSeries(DEFAULT_ACCOUNT_ID, { from: '2026-11-01T00:00:00.000Z', to: '2026-12-01T00:00:00.000Z', bucket: 'day' });
      assert.deepEqual(days, [
        { start: `${DAY}T00:00:00.000Z`, costNano: 11_111, requests: 5, errors: 1 },
        { start: '2026-11-22T00:00:00.000Z', costNano: 9_007_199_354_000, requests: 2, errors: 1 },
      ]);
      assert.deepEqual(
        await store.spendSeries(DEFAULT_ACCOUNT_ID, { from: '2026-12-01T00:00:00.000Z', to: '2026-12-02T00:00:00.000Z', bucket: 'day' }),
        [],
      );
      assert.deepEqual(
        (await store.spendSeries(OTHER_ACCOUNT, { from: '2026-11-01T00:00:00.000Z', to: '2026-12-01T00:00:00.000Z', bucket: 'day' })).map(
          (bucket) => bucket.requests,
        ),
        [1],
      );
    }));

  test('usageBy: per answering model (else requested), per key and per UTC day, tokens from usage, most requests first', () =>
    run(async (store) => {
      await seedReceipts(store);
      const range = { from: `${DAY}T00:00:00.000Z`, to: '2026-11-23T00:00:00.000Z' };
      assert.deepEqual(await store.usageBy(DEFAULT_ACCOUNT_ID, { ...range, by: 'model' }), [
        { name: 'sim/swift-mini', requests: 3, errors: 0, inputTokens: 3_600, outputTokens: 900, costNano: 10_011 },
        { name: 'sim/sage', requests: 2, errors: 0, inputTokens: 2_400, outputTokens: 600, costNano: 9_007_199_255_000 },
        { name: '(unknown)', requests: 1, errors: 1, inputTokens: 1_200, outputTokens: 300, costNano: 100_000 },
        { name: 'svc/fast', requests: 1, errors: 1, inputTokens: 0, outputTokens: 0, costNano: 100 },
      ]);
      assert.deepEqual(await store.usageBy(DEFAULT_ACCOUNT_ID, { from: `${DAY}T10:00:00.000Z`, to: `${DAY}T11:00:00.000Z`, by: 'key' }), [
        { name: 'key_000000001aaaaaaaaaaaa', requests: 2, errors: 1, inputTokens: 1_200, outputTokens: 300, costNano: 1_100 },
        { name: 'key_b', requests: 1, errors: 0, inputTokens: 1_200, outputTokens: 300, costNano: 10 },
      ]);
      assert.deepEqual(await store.usageBy(DEFAULT_ACCOUNT_ID, { ...range, by: 'day' }), [
        { name: DAY, requests: 5, errors: 1, inputTokens: 4_800, outputTokens: 1_200, costNano: 11_111 },
        { name: '2026-11-22', requests: 2, errors: 1, inputTokens: 2_400, outputTokens: 600, costNano: 9_007_199_354_000 },
      ]);
      assert.deepEqual(await store.usageBy(DEFAULT_ACCOUNT_ID, { from: '2027-01-01T00:00:00.000Z', to: '2027-02-01T00:00:00.000Z', by: 'key' }), []);
    }));

  test('usageSeries: per bucket and group, sums equal to the receipts, failed fallback candidates counted for their model', () =>
    run(async (store) => {
      const receipts = await seedReceipts(store);
      const zero = { requests: 0, errors: 0, inputTokens: 0, outputTokens: 0, costNano: 0, failedAttempts: 0 };
      const hour = `${DAY}T10:00:00.000Z`;
      assert.deepEqual(await store.usageSeries(DEFAULT_ACCOUNT_ID, { from: hour, to: `${DAY}T11:00:00.000Z`, bucket: 'hour', by: 'model' }), [
        { ...zero, start: hour, name: 'sim/sage', requests: 1, inputTokens: 1_200, outputTokens: 300, costNano: 1_000 },
        { ...zero, start: hour, name: 'sim/steady', failedAttempts: 3 },
        { ...zero, start: hour, name: 'sim/swift-mini', requests: 1, inputTokens: 1_200, outputTokens: 300, costNano: 10 },
        { ...zero, start: hour, name: 'svc/fast', requests: 1, errors: 1, costNano: 100 },
      ]);
      const month = { from: '2026-11-01T00:00:00.000Z', to: '2026-12-01T00:00:00.000Z' };
      assert.deepEqual(await store.usageSeries(DEFAULT_ACCOUNT_ID, { ...month, bucket: 'day', by: 'account' }), [
        {
          start: `${DAY}T00:00:00.000Z`,
          name: 'account',
          requests: 5,
          errors: 1,
          inputTokens: 4_800,
          outputTokens: 1_200,
          costNano: 11_111,
          failedAttempts: 5,
        },
        {
          start: '2026-11-22T00:00:00.000Z',
          name: 'account',
          requests: 2,
          errors: 1,
          inputTokens: 2_400,
          outputTokens: 600,
          costNano: 9_007_199_354_000,
          failedAttempts: 2,
        },
      ]);
      assert.deepEqual(await store.usageSeries(DEFAULT_ACCOUNT_ID, { ...month, bucket: 'day', by: 'key', keyId: 'key_b' }), [
        {
          start: `${DAY}T00:00:00.000Z`,
          name: 'key_b',
          requests: 2,
          errors: 0,
          inputTokens: 2_400,
          outputTokens: 600,
          costNano: 10_010,
          failedAttempts: 2,
        },
      ]);
      for (const by of ['account', 'key', 'model'] as const) {
        const rows = await store.usageSeries(DEFAULT_ACCOUNT_ID, { ...month, bucket: 'hour', by });
        const total = (field: 'requests' | 'costNano' | 'inputTokens') => rows.reduce((sum, row) => sum + row[field], 0);
        assert.equal(
          total('costNano'),
          receipts.reduce((sum, receipt) => sum + receipt.costNano, 0),
          `${by}: cost equals the receipts'`,
        );
        assert.equal(total('requests'), receipts.length, `${by}: one request per receipt`);
        assert.equal(
          total('inputTokens'),
          receipts.reduce((sum, receipt) => sum + (receipt.usage?.inputTokens ?? 0), 0),
        );
      }
      assert.deepEqual(await store.usageSeries(OTHER_ACCOUNT, { ...month, bucket: 'day', by: 'key', keyId: 'key_b' }), []);
    }));

  test('listAudit: filtered by actor in any case and by action or its kind, newest first, paged', () =>
    run(async (store) => {
      const write = (actor: string, action: string) =>
        store.appendAudit({ accountId: DEFAULT_ACCOUNT_ID, at: `${DAY}T10:00:00.000Z`, actor, action, detail: {} });
      await write(OWNER, 'key.created');
      await write('cli', 'funds.added');
      await write(OWNER.toLowerCase(), 'key.revoked');
      await write(MEMBER, 'key.limits');
      await write(OWNER, 'keyring.odd');
      await store.appendAudit({ accountId: OTHER_ACCOUNT, at: `${DAY}T10:00:00.000Z`, actor: OWNER, action: 'key.created', detail: {} });
      const actions = async (filter: { actor?: string; action?: string }, limit = 10, beforeId?: number) =>
        (await store.listAudit(DEFAULT_ACCOUNT_ID, limit, beforeId, filter)).map((entry) => entry.action);
      assert.deepEqual(await actions({ actor: OWNER.toUpperCase().replace('0X', '0x') }), ['keyring.odd', 'key.revoked', 'key.created']);
      assert.deepEqual(await actions({ action: 'key' }), ['key.limits', 'key.revoked', 'key.created']);
      assert.deepEqual(await actions({ action: 'key.revoked' }), ['key.revoked']);
      assert.deepEqual(await actions({ actor: OWNER, action: 'key' }), ['key.revoked', 'key.created']);
      const [newest] = await store.listAudit(DEFAULT_ACCOUNT_ID, 1, undefined, { action: 'key' });
      assert.deepEqual(await actions({ action: 'key' }, 10, newest!.id), ['key.revoked', 'key.created']);
      assert.deepEqual(await actions({ actor: 'cli' }), ['funds.added']);
    }));

  test('listFunds: funds added, newest first, paged by beforeId', () =>
    run(async (store) => {
      for (const [index, amount] of [1, 20, 300, 4_000, 9_007_199_254_740_991 - 4_321].entries()) {
        await store.addFunds(DEFAULT_ACCOUNT_ID, amount, 'cli', index % 2 ? `top-up ${index}` : undefined);
      }
      await store.insertKey(sampleKey({ id: 'key_other', hash: 'hash-other', accountId: OTHER_ACCOUNT }));
      await store.addFunds(OTHER_ACCOUNT, 5, 'cli');
      const first = await store.listFunds(DEFAULT_ACCOUNT_ID, { limit: 2 });
      assert.deepEqual(
        first.map((entry) => [entry.amountNano, entry.note]),
        [
          [9_007_199_254_740_991 - 4_321, null],
          [4_000, 'top-up 3'],
        ],
      );
      assert.ok(first[0]!.id > first[1]!.id && !Number.isNaN(Date.parse(first[0]!.at)));
      const second = await store.listFunds(DEFAULT_ACCOUNT_ID, { limit: 2, beforeId: first[1]!.id });
      assert.deepEqual(
        second.map((entry) => entry.amountNano),
        [300, 20],
      );
      const third = await store.listFunds(DEFAULT_ACCOUNT_ID, { limit: 2, beforeId: second[1]!.id });
      assert.deepEqual(
        third.map((entry) => [entry.amountNano, entry.note]),
        [[1, null]],
      );
      assert.deepEqual(await store.listFunds(DEFAULT_ACCOUNT_ID, { limit: 2, beforeId: third[0]!.id }), []);
      assert.deepEqual(
        (await store.listFunds(OTHER_ACCOUNT, { limit: 10 })).map((entry) => entry.amountNano),
        [5],
      );
    }));
}
