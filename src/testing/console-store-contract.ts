import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AliasRule, ReceiptRecord, SessionRecord, SignInNonceRecord } from '../storage/records.ts';
import { asStored, sampleKey, sampleReceipt, storeRunner } from './store-contract.ts';
import { DEFAULT_ACCOUNT_ID, type Store } from '../storage/store.ts';

const OTHER_ACCOUNT = 'acct_other';
const DAY = '2026-11-21';
const OWNER = '0xaaaa000000000000000000000000000000000001';
const MEMBER = '0xbbbb000000000000000000000000000000000002';
const STRANGER = '0xcccc000000000000000000000000000000000003';

/** A racing first sign-in's address, number `index`. */
export function racingAddress(index: number): string {
  return `0x${index.toString(16).padStart(40, '0')}`;
}

export function sampleSession(overrides: Partial<SessionRecord> = {}): SessionRecord {
  const id = overrides.id ?? 'sess_1';
  return {
    id,
    tokenHash: `hash-of-${id}`,
    accountId: DEFAULT_ACCOUNT_ID,
    address: MEMBER,
    createdAt: `${DAY}T10:00:00.000Z`,
    expiresAt: `${DAY}T22:00:00.000Z`,
    endedAt: null,
    ...overrides,
  };
}

export function sampleNonce(overrides: Partial<SignInNonceRecord> = {}): SignInNonceRecord {
  return { nonce: 'nonce_1', address: OWNER, createdAt: `${DAY}T10:00:00.000Z`, expiresAt: `${DAY}T10:10:00.000Z`, ...overrides };
}

function rule(overrides: Partial<AliasRule> = {}): AliasRule {
  return {
    alias: 'svc/fast',
    candidates: ['sim/swift-mini', 'sim/steady'],
    reasoning: 'low',
    updatedAt: `${DAY}T10:00:00.000Z`,
    updatedBy: OWNER,
    ...overrides,
  };
}

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

/** The console's storage every Store backend must show: audit, key limits, receipt search, spend, members, sessions, nonces, rules. */
export function runConsoleStoreContract(name: string, makeStore: () => Promise<Store>): void {
  const run = storeRunner(makeStore);
  const actions = async (store: Store) => (await store.listAudit(DEFAULT_ACCOUNT_ID, 100)).map((entry) => [entry.action, entry.actor]);

  describe(`Console store contract: ${name}`, () => {
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
          { keyId: key.id, prefix: key.prefix, dailyLimit: '2.500000001', rateLimitPerMinute: 60 },
          { keyId: key.id, prefix: key.prefix, dailyLimit: '2.500000001', rateLimitPerMinute: null },
          { keyId: key.id, prefix: key.prefix, dailyLimit: null, rateLimitPerMinute: 7 },
        ]);

        assert.equal(await store.updateKeyLimits(DEFAULT_ACCOUNT_ID, 'key_missing', { rateLimitPerMinute: 1 }, OWNER, at), null);
        assert.equal(await store.updateKeyLimits(OTHER_ACCOUNT, key.id, { rateLimitPerMinute: 1 }, OWNER, at), null);
        await assert.rejects(store.updateKeyLimits(DEFAULT_ACCOUNT_ID, key.id, { dailyLimitNano: 1.5 }, OWNER, at), RangeError);
        await assert.rejects(store.updateKeyLimits(DEFAULT_ACCOUNT_ID, key.id, { rateLimitPerMinute: 0 }, OWNER, at), RangeError);
        assert.equal((await store.listAudit(DEFAULT_ACCOUNT_ID, 10)).length, 3);
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

    test('usageBy: per answering model (else requested) and per key, tokens from usage, most requests first', () =>
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
        assert.deepEqual(
          await store.usageBy(DEFAULT_ACCOUNT_ID, { from: '2027-01-01T00:00:00.000Z', to: '2027-02-01T00:00:00.000Z', by: 'key' }),
          [],
        );
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

    test('claimMembership: the first address owns the account, others are refused, members get their membership', () =>
      run(async (store) => {
        const at = `${DAY}T10:00:00.000Z`;
        const owner = await store.claimMembership(DEFAULT_ACCOUNT_ID, OWNER.toUpperCase().replace('0X', '0x'), at);
        assert.deepEqual(owner, { accountId: DEFAULT_ACCOUNT_ID, address: OWNER, role: 'owner', addedAt: at, addedBy: 'sign-in' });
        assert.equal(await store.claimMembership(DEFAULT_ACCOUNT_ID, STRANGER, `${DAY}T10:01:00.000Z`), null);
        assert.deepEqual(await store.claimMembership(DEFAULT_ACCOUNT_ID, OWNER, `${DAY}T11:00:00.000Z`), owner, 'unchanged on a later sign-in');
        await store.addMember(DEFAULT_ACCOUNT_ID, MEMBER, OWNER, `${DAY}T10:05:00.000Z`);
        assert.equal((await store.claimMembership(DEFAULT_ACCOUNT_ID, MEMBER, `${DAY}T12:00:00.000Z`))?.role, 'member');
        assert.deepEqual(await actions(store), [
          ['member.added', OWNER],
          ['member.owner', OWNER],
        ]);
        assert.deepEqual((await store.listAudit(DEFAULT_ACCOUNT_ID, 100)).at(-1)?.detail, { address: OWNER });
        // Each account has its own owner.
        assert.equal((await store.claimMembership(OTHER_ACCOUNT, STRANGER, at))?.role, 'owner');
      }));

    test('claimMembership: first sign-ins racing make exactly one owner', () =>
      run(async (store) => {
        const claims = await Promise.all(
          Array.from({ length: 16 }, (_, index) => store.claimMembership(DEFAULT_ACCOUNT_ID, racingAddress(index), `${DAY}T10:00:00.000Z`)),
        );
        const owners = claims.filter((claim) => claim !== null);
        assert.equal(owners.length, 1);
        assert.equal(owners[0]!.role, 'owner');
        assert.deepEqual(
          (await store.listMembers(DEFAULT_ACCOUNT_ID)).map((member) => member.address),
          [owners[0]!.address],
        );
        assert.deepEqual(await actions(store), [['member.owner', owners[0]!.address]]);
      }));

    test('members: owner first then by when added; add is idempotent; the owner is never removed', () =>
      run(async (store) => {
        await store.claimMembership(DEFAULT_ACCOUNT_ID, OWNER, `${DAY}T10:00:00.000Z`);
        const later = await store.addMember(DEFAULT_ACCOUNT_ID, STRANGER, OWNER, `${DAY}T10:09:00.000Z`);
        const member = await store.addMember(DEFAULT_ACCOUNT_ID, MEMBER.toUpperCase().replace('0X', '0x'), 'cli', `${DAY}T10:05:00.000Z`);
        assert.deepEqual(member, { accountId: DEFAULT_ACCOUNT_ID, address: MEMBER, role: 'member', addedAt: `${DAY}T10:05:00.000Z`, addedBy: 'cli' });
        assert.deepEqual(await store.addMember(DEFAULT_ACCOUNT_ID, MEMBER, OWNER, `${DAY}T11:00:00.000Z`), member, 'existing one unchanged');
        assert.deepEqual((await store.addMember(DEFAULT_ACCOUNT_ID, OWNER, OWNER, `${DAY}T11:00:00.000Z`)).role, 'owner');
        assert.deepEqual(
          (await store.listMembers(DEFAULT_ACCOUNT_ID)).map((entry) => [entry.address, entry.role]),
          [
            [OWNER, 'owner'],
            [MEMBER, 'member'],
            [STRANGER, 'member'],
          ],
        );
        assert.deepEqual(later.addedBy, OWNER);
        assert.deepEqual(await store.listMembers(OTHER_ACCOUNT), []);

        assert.equal(await store.removeMember(DEFAULT_ACCOUNT_ID, OWNER, OWNER, `${DAY}T12:00:00.000Z`), false);
        assert.equal(
          await store.removeMember(DEFAULT_ACCOUNT_ID, '0xdddd000000000000000000000000000000000004', OWNER, `${DAY}T12:00:00.000Z`),
          false,
        );
        assert.equal((await store.listMembers(DEFAULT_ACCOUNT_ID)).length, 3);
        assert.deepEqual(await actions(store), [
          ['member.added', 'cli'],
          ['member.added', OWNER],
          ['member.owner', OWNER],
        ]);
      }));

    test('removing a member ends its open sessions, and only its own; audited', () =>
      run(async (store) => {
        await store.claimMembership(DEFAULT_ACCOUNT_ID, OWNER, `${DAY}T10:00:00.000Z`);
        await store.addMember(DEFAULT_ACCOUNT_ID, MEMBER, OWNER, `${DAY}T10:01:00.000Z`);
        await store.insertSession(sampleSession({ id: 'sess_1' }));
        await store.insertSession(sampleSession({ id: 'sess_2' }));
        await store.insertSession(sampleSession({ id: 'sess_old', endedAt: `${DAY}T10:30:00.000Z` }));
        await store.insertSession(sampleSession({ id: 'sess_owner', address: OWNER }));
        const at = `${DAY}T11:00:00.000Z`;
        assert.equal(await store.removeMember(DEFAULT_ACCOUNT_ID, MEMBER.toUpperCase().replace('0X', '0x'), OWNER, at), true);
        assert.equal(await store.removeMember(DEFAULT_ACCOUNT_ID, MEMBER, OWNER, at), false, 'not a member any more');
        assert.equal(await store.claimMembership(DEFAULT_ACCOUNT_ID, MEMBER, at), null);
        assert.deepEqual(
          (await store.listMembers(DEFAULT_ACCOUNT_ID)).map((entry) => entry.address),
          [OWNER],
        );
        assert.equal((await store.findSession('hash-of-sess_1'))?.endedAt, at);
        assert.equal((await store.findSession('hash-of-sess_2'))?.endedAt, at);
        assert.equal((await store.findSession('hash-of-sess_old'))?.endedAt, `${DAY}T10:30:00.000Z`, 'an ended session keeps its end');
        assert.equal((await store.findSession('hash-of-sess_owner'))?.endedAt, null);
        const [entry] = await store.listAudit(DEFAULT_ACCOUNT_ID, 1);
        assert.deepEqual(
          [entry?.action, entry?.actor, entry?.at, entry?.detail],
          ['member.removed', OWNER, at, { address: MEMBER, sessionsEnded: 2 }],
        );
      }));

    test('sessions: found by token hash ended or not; endSession once; endSessionsOf counts the open ones', () =>
      run(async (store) => {
        const session = sampleSession({ address: MEMBER.toUpperCase().replace('0X', '0x') });
        await store.insertSession(session);
        assert.deepEqual(await store.findSession(session.tokenHash), { ...session, address: MEMBER });
        assert.equal(await store.findSession('no-such-hash'), null);
        await assert.rejects(store.insertSession(sampleSession({ id: 'sess_dup', tokenHash: session.tokenHash })));

        await store.endSession(session.tokenHash, `${DAY}T11:00:00.000Z`);
        await store.endSession(session.tokenHash, `${DAY}T12:00:00.000Z`);
        await store.endSession('no-such-hash', `${DAY}T12:00:00.000Z`);
        assert.equal((await store.findSession(session.tokenHash))?.endedAt, `${DAY}T11:00:00.000Z`);

        await store.insertKey(sampleKey({ id: 'key_other', hash: 'hash-other', accountId: OTHER_ACCOUNT }));
        for (const id of ['sess_a', 'sess_b', 'sess_c']) await store.insertSession(sampleSession({ id }));
        await store.insertSession(sampleSession({ id: 'sess_owner', address: OWNER }));
        await store.insertSession(sampleSession({ id: 'sess_elsewhere', accountId: OTHER_ACCOUNT }));
        assert.equal(await store.endSessionsOf(DEFAULT_ACCOUNT_ID, MEMBER, `${DAY}T13:00:00.000Z`), 3);
        assert.equal(await store.endSessionsOf(DEFAULT_ACCOUNT_ID, MEMBER, `${DAY}T14:00:00.000Z`), 0);
        assert.equal((await store.findSession('hash-of-sess_b'))?.endedAt, `${DAY}T13:00:00.000Z`);
        assert.equal((await store.findSession('hash-of-sess_owner'))?.endedAt, null);
        assert.equal((await store.findSession('hash-of-sess_elsewhere'))?.endedAt, null);
      }));

    test('sign-in nonces: consumed once, refused when expired, one of racing consumers gets it', () =>
      run(async (store) => {
        const nonce = sampleNonce();
        await store.insertSignInNonce(nonce);
        await assert.rejects(store.insertSignInNonce(nonce), 'a nonce is unique');
        assert.deepEqual(await store.consumeSignInNonce(nonce.nonce, `${DAY}T10:09:59.999Z`), nonce);
        assert.equal(await store.consumeSignInNonce(nonce.nonce, `${DAY}T10:09:59.999Z`), null);
        assert.equal(await store.consumeSignInNonce('nonce_unknown', `${DAY}T10:00:00.000Z`), null);

        await store.insertSignInNonce(sampleNonce({ nonce: 'nonce_expired' }));
        assert.equal(await store.consumeSignInNonce('nonce_expired', `${DAY}T10:10:00.000Z`), null, 'at its expiry it is gone');
        assert.equal(await store.consumeSignInNonce('nonce_expired', `${DAY}T10:00:00.000Z`), null, 'and never comes back');

        await store.insertSignInNonce(sampleNonce({ nonce: 'nonce_raced', address: OWNER.toUpperCase().replace('0X', '0x') }));
        const takes = await Promise.all(Array.from({ length: 8 }, () => store.consumeSignInNonce('nonce_raced', `${DAY}T10:05:00.000Z`)));
        assert.deepEqual(
          takes.filter((take) => take !== null),
          [sampleNonce({ nonce: 'nonce_raced' })],
        );
      }));

    test('alias rules: upserted per alias and account, listed, audited as rules.set by their author', () =>
      run(async (store) => {
        assert.deepEqual(await store.listAliasRules(DEFAULT_ACCOUNT_ID), []);
        await store.setAliasRule(DEFAULT_ACCOUNT_ID, rule());
        await store.setAliasRule(DEFAULT_ACCOUNT_ID, rule({ alias: 'svc/best', candidates: ['sim/sage'], reasoning: 'xhigh' }));
        const replaced = rule({ candidates: ['sim/steady'], reasoning: 'medium', updatedAt: `${DAY}T11:00:00.000Z`, updatedBy: MEMBER });
        await store.setAliasRule(DEFAULT_ACCOUNT_ID, replaced);
        await store.setAliasRule(OTHER_ACCOUNT, rule({ alias: 'svc/balanced' }));
        assert.deepEqual(await store.listAliasRules(DEFAULT_ACCOUNT_ID), [
          rule({ alias: 'svc/best', candidates: ['sim/sage'], reasoning: 'xhigh' }),
          replaced,
        ]);
        assert.deepEqual(
          (await store.listAliasRules(OTHER_ACCOUNT)).map((entry) => entry.alias),
          ['svc/balanced'],
        );
        const [entry] = await store.listAudit(DEFAULT_ACCOUNT_ID, 1);
        assert.deepEqual(
          [entry?.action, entry?.actor, entry?.at, entry?.detail],
          ['rules.set', MEMBER, `${DAY}T11:00:00.000Z`, { alias: 'svc/fast', candidates: ['sim/steady'], reasoning: 'medium' }],
        );
        await assert.rejects(store.setAliasRule(DEFAULT_ACCOUNT_ID, rule({ reasoning: 'extreme' as AliasRule['reasoning'] })));
        assert.equal((await store.listAudit(DEFAULT_ACCOUNT_ID, 100)).length, 3, 'a refused rule writes no audit entry');
      }));

    test('listAudit pages newest first with beforeId, per account', () =>
      run(async (store) => {
        for (let index = 0; index < 7; index++) {
          await store.appendAudit({
            accountId: DEFAULT_ACCOUNT_ID,
            at: `${DAY}T10:00:0${index}.000Z`,
            actor: 'cli',
            action: `test.${index}`,
            detail: { index },
          });
        }
        await store.appendAudit({ accountId: OTHER_ACCOUNT, at: `${DAY}T10:00:00.000Z`, actor: 'cli', action: 'test.other', detail: {} });
        const seen: string[] = [];
        let beforeId: number | undefined;
        for (;;) {
          const page = await store.listAudit(DEFAULT_ACCOUNT_ID, 3, beforeId);
          if (page.length === 0) break;
          seen.push(...page.map((entry) => entry.action));
          beforeId = page.at(-1)!.id;
        }
        assert.deepEqual(seen, ['test.6', 'test.5', 'test.4', 'test.3', 'test.2', 'test.1', 'test.0']);
        assert.deepEqual(
          (await store.listAudit(OTHER_ACCOUNT, 10)).map((entry) => entry.action),
          ['test.other'],
        );
      }));
  });
}
