import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { HoldRecord } from '../storage/records.ts';
import { sampleKey, sampleReceipt, sampleRequest, storeRunner } from './store-samples.ts';
import { DEFAULT_ACCOUNT_ID, type HoldJournal, type Store } from '../storage/store.ts';

const DAY = '2026-11-21';
const MONTH = '2026-11';

export function sampleHold(overrides: Partial<HoldRecord> = {}): HoldRecord {
  const id = overrides.id ?? 'rcpt_hold0001';
  return {
    ...sampleRequest(id),
    endpoint: 'chat.completions',
    stream: false,
    requestedModel: 'svc/fast',
    amountNano: 1_000,
    day: DAY,
    month: MONTH,
    createdAt: `${DAY}T10:00:00.000Z`,
    owner: 'host/1/a',
    expiresAt: `${DAY}T10:01:00.000Z`,
    ...overrides,
  };
}

/** A hold journal in memory, as the Redis one behaves; `up: false` makes it unavailable and every call fail. */
export function createMemoryHoldJournal(): HoldJournal & { up: boolean; size(): number } {
  const owners = new Map<string, Map<string, Map<string, string>>>();
  const ownersOf = (scope: string) => owners.get(scope) ?? owners.set(scope, new Map()).get(scope)!;
  const journal = {
    up: true,
    available: () => journal.up,
    async put(scope: string, owner: string, entries: ReadonlyMap<string, string>) {
      if (!journal.up) throw new Error('journal down');
      const hash = ownersOf(scope).get(owner) ?? ownersOf(scope).set(owner, new Map()).get(owner)!;
      for (const [id, text] of entries) hash.set(id, text);
    },
    async remove(scope: string, owner: string, ids: readonly string[]) {
      if (!journal.up) throw new Error('journal down');
      for (const id of ids) ownersOf(scope).get(owner)?.delete(id);
    },
    async entries(scope: string, owner: string) {
      if (!journal.up) throw new Error('journal down');
      return new Map(ownersOf(scope).get(owner) ?? []);
    },
    async owners(scope: string) {
      if (!journal.up) throw new Error('journal down');
      return [...ownersOf(scope).keys()];
    },
    async dropOwner(scope: string, owner: string) {
      if (!journal.up) throw new Error('journal down');
      if (ownersOf(scope).get(owner)?.size === 0) ownersOf(scope).delete(owner);
    },
    size: () => [...owners.values()].reduce((total, scope) => total + [...scope.values()].reduce((sum, hash) => sum + hash.size, 0), 0),
  };
  return journal;
}

/** Ledger behaviour every Store backend must show: holds, charges, limits, recovery. */
export function runLedgerContract(name: string, makeStore: () => Promise<Store>): void {
  const run = storeRunner(makeStore);
  const withStore = (body: (store: Store) => Promise<void>) =>
    run(async (store) => {
      await store.insertKey(sampleKey());
      await body(store);
    });

  async function assertInvariant(store: Store): Promise<void> {
    const totals = await store.ledgerTotals(DEFAULT_ACCOUNT_ID);
    assert.equal(totals.funds - totals.charges, await store.getBalance(DEFAULT_ACCOUNT_ID), 'funds - charges = balance');
  }

  describe(`Ledger contract: ${name}`, () => {
    test('a hold fits the available balance (balance minus holds) or nothing is written', () =>
      withStore(async (store) => {
        await store.addFunds(DEFAULT_ACCOUNT_ID, 2_500, 'test');
        assert.deepEqual(await store.placeHold(sampleHold({ id: 'rcpt_1' }), null), { placed: true });
        assert.deepEqual(await store.placeHold(sampleHold({ id: 'rcpt_2' }), null), { placed: true });
        assert.deepEqual(await store.placeHold(sampleHold({ id: 'rcpt_3' }), null), {
          placed: false,
          reason: 'insufficient_balance',
          remainingNano: 500,
        });
        assert.deepEqual(
          (await store.listHolds(DEFAULT_ACCOUNT_ID)).map((hold) => hold.id),
          ['rcpt_1', 'rcpt_2'],
        );
        const summary = await store.accountSummary(DEFAULT_ACCOUNT_ID, MONTH);
        assert.deepEqual([summary.balanceNano, summary.heldNano, summary.holdCount], [2_500, 2_000, 2]);
      }));

    test('settling charges the cost, releases the hold and keeps funds - charges = balance', () =>
      withStore(async (store) => {
        await store.addFunds(DEFAULT_ACCOUNT_ID, 10_000, 'test');
        await store.placeHold(sampleHold({ id: 'rcpt_1', amountNano: 4_000 }), null);
        await store.recordReceipt(
          sampleReceipt({ id: 'rcpt_1', keyId: 'key_000000001aaaaaaaaaaaa', holdNano: 4_000, costNano: 1_234, createdAt: `${DAY}T10:00:00.000Z` }),
        );
        assert.deepEqual(await store.listHolds(DEFAULT_ACCOUNT_ID), []);
        assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 8_766);
        assert.deepEqual(await store.keyDaySpend('key_000000001aaaaaaaaaaaa', DAY), { chargedNano: 1_234, heldNano: 0 });
        assert.equal((await store.accountSummary(DEFAULT_ACCOUNT_ID, MONTH)).monthChargedNano, 1_234);
        await assertInvariant(store);
      }));

    test('a cost above the hold is still charged in full', () =>
      withStore(async (store) => {
        await store.addFunds(DEFAULT_ACCOUNT_ID, 1_000, 'test');
        await store.placeHold(sampleHold({ id: 'rcpt_1', amountNano: 1_000 }), null);
        await store.recordReceipt(sampleReceipt({ id: 'rcpt_1', keyId: 'key_000000001aaaaaaaaaaaa', holdNano: 1_000, costNano: 1_500 }));
        assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), -500);
        await assertInvariant(store);
        assert.equal((await store.placeHold(sampleHold({ id: 'rcpt_2', amountNano: 0 }), null)).placed, false, 'an overdrawn account holds nothing');
      }));

    test('daily key limit counts the day charges plus the key holds, per UTC day', () =>
      withStore(async (store) => {
        await store.addFunds(DEFAULT_ACCOUNT_ID, 1_000_000, 'test');
        const key = 'key_000000001aaaaaaaaaaaa';
        await store.placeHold(sampleHold({ id: 'rcpt_1', amountNano: 600 }), 1_000);
        await store.recordReceipt(sampleReceipt({ id: 'rcpt_1', keyId: key, costNano: 300, createdAt: `${DAY}T10:00:00.000Z` }));
        assert.deepEqual(await store.placeHold(sampleHold({ id: 'rcpt_2', amountNano: 500 }), 1_000), { placed: true });
        assert.deepEqual(await store.placeHold(sampleHold({ id: 'rcpt_3', amountNano: 201 }), 1_000), {
          placed: false,
          reason: 'daily_limit',
          remainingNano: 200,
        });
        assert.deepEqual(await store.placeHold(sampleHold({ id: 'rcpt_4', amountNano: 200 }), 1_000), { placed: true });
        assert.deepEqual(
          await store.placeHold(sampleHold({ id: 'rcpt_5', amountNano: 900, day: '2026-11-22' }), 1_000),
          { placed: true },
          'a new day starts afresh',
        );
      }));

    test('monthly budget counts the month charges plus holds; set and removed with an audit entry', () =>
      withStore(async (store) => {
        await store.addFunds(DEFAULT_ACCOUNT_ID, 1_000_000, 'test');
        await store.setMonthlyBudget(DEFAULT_ACCOUNT_ID, 1_000, 'cli');
        await store.placeHold(sampleHold({ id: 'rcpt_1', amountNano: 700 }), null);
        assert.deepEqual(await store.placeHold(sampleHold({ id: 'rcpt_2', amountNano: 301 }), null), {
          placed: false,
          reason: 'monthly_budget',
          remainingNano: 300,
        });
        assert.deepEqual(await store.placeHold(sampleHold({ id: 'rcpt_3', amountNano: 500, month: '2026-12', day: '2026-12-01' }), null), {
          placed: true,
        });
        assert.equal((await store.accountSummary(DEFAULT_ACCOUNT_ID, MONTH)).monthlyBudgetNano, 1_000);
        await store.setMonthlyBudget(DEFAULT_ACCOUNT_ID, null, 'cli');
        assert.equal((await store.placeHold(sampleHold({ id: 'rcpt_4', amountNano: 301 }), null)).placed, true);
        const audit = await store.listAudit(DEFAULT_ACCOUNT_ID, 2);
        assert.deepEqual(
          audit.map((entry) => [entry.action, entry.detail]),
          [
            ['budget.set', { monthly_budget: null, before: { monthly_budget: '0.000001000' } }],
            ['budget.set', { monthly_budget: '0.000001000', before: { monthly_budget: null } }],
          ],
        );
      }));

    test('holds of a dead or silent owner are released and their receipts closed at cost 0', () =>
      withStore(async (store) => {
        await store.addFunds(DEFAULT_ACCOUNT_ID, 10_000, 'test');
        await store.placeHold(sampleHold({ id: 'rcpt_live', owner: 'host/1/live' }), null);
        await store.placeHold(sampleHold({ id: 'rcpt_dead', owner: 'host/2/dead' }), null);
        await store.placeHold(sampleHold({ id: 'rcpt_silent', owner: 'host/3/silent' }), null);
        await store.extendHolds('host/1/live', ['rcpt_live'], `${DAY}T11:00:00.000Z`);
        await store.extendHolds('host/2/dead', ['rcpt_dead'], `${DAY}T11:00:00.000Z`);
        const released = await store.releaseOrphanedHolds(`${DAY}T10:30:00.000Z`, (owner) => owner === 'host/2/dead');
        assert.deepEqual(released.map((receipt) => receipt.id).sort(), ['rcpt_dead', 'rcpt_silent']);
        assert.deepEqual(
          (await store.listHolds(DEFAULT_ACCOUNT_ID)).map((hold) => hold.id),
          ['rcpt_live'],
        );
        const closed = await store.getReceipt(DEFAULT_ACCOUNT_ID, 'rcpt_dead');
        assert.deepEqual([closed?.status, closed?.costNano, closed?.holdNano, closed?.errorCode], ['failed', 0, 1_000, 'internal_error']);
        assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 10_000);
        await assertInvariant(store);
      }));

    test('only the holds named are renewed: a hold its owner stopped tracking expires and is recovered', () =>
      withStore(async (store) => {
        await store.addFunds(DEFAULT_ACCOUNT_ID, 10_000, 'test');
        await store.placeHold(sampleHold({ id: 'rcpt_in_flight' }), null);
        await store.placeHold(sampleHold({ id: 'rcpt_given_up' }), null);
        await store.placeHold(sampleHold({ id: 'rcpt_other', owner: 'host/9/other' }), null);
        await store.extendHolds('host/1/a', ['rcpt_in_flight', 'rcpt_other', 'rcpt_unknown'], `${DAY}T11:00:00.000Z`);
        const released = await store.releaseOrphanedHolds(`${DAY}T10:30:00.000Z`, () => false);
        assert.deepEqual(released.map((receipt) => receipt.id).sort(), ['rcpt_given_up', 'rcpt_other']);
        assert.deepEqual(
          (await store.listHolds(DEFAULT_ACCOUNT_ID)).map((hold) => hold.id),
          ['rcpt_in_flight'],
        );
      }));

    test('a recovered request is charged the estimate on its hold; one without an estimate costs 0', () =>
      withStore(async (store) => {
        const key = 'key_000000001aaaaaaaaaaaa';
        await store.addFunds(DEFAULT_ACCOUNT_ID, 10_000, 'test');
        await store.placeHold(sampleHold({ id: 'rcpt_called', amountNano: 3_000, estimatedCostNano: 700 }), null);
        await store.placeHold(sampleHold({ id: 'rcpt_plain', amountNano: 3_000 }), null);
        assert.deepEqual(
          (await store.listHolds(DEFAULT_ACCOUNT_ID)).map((hold) => [hold.id, hold.estimatedCostNano]),
          [
            ['rcpt_called', 700],
            ['rcpt_plain', 0],
          ],
        );
        await store.releaseOrphanedHolds(`${DAY}T10:30:00.000Z`, () => true);
        const called = await store.getReceipt(DEFAULT_ACCOUNT_ID, 'rcpt_called');
        assert.deepEqual([called?.status, called?.costNano, called?.usageEstimated], ['failed', 700, true]);
        assert.equal((await store.getReceipt(DEFAULT_ACCOUNT_ID, 'rcpt_plain'))?.costNano, 0);
        assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 9_300);
        assert.deepEqual(await store.keyDaySpend(key, DAY), { chargedNano: 700, heldNano: 0 });
        assert.equal((await store.accountSummary(DEFAULT_ACCOUNT_ID, MONTH)).monthChargedNano, 700);
        await assertInvariant(store);
      }));

    test('placing the same hold twice (a retry after a lost reply) holds it once', () =>
      withStore(async (store) => {
        await store.addFunds(DEFAULT_ACCOUNT_ID, 1_500, 'test');
        assert.deepEqual(await store.placeHold(sampleHold({ id: 'rcpt_1' }), null), { placed: true });
        assert.deepEqual(await store.placeHold(sampleHold({ id: 'rcpt_1' }), null), { placed: true });
        assert.equal((await store.accountSummary(DEFAULT_ACCOUNT_ID, MONTH)).heldNano, 1_000);
      }));

    test('concurrent holds and settlements keep the balance, daily limit and budget exact', () =>
      withStore(async (store) => {
        const key = 'key_000000001aaaaaaaaaaaa';
        await store.addFunds(DEFAULT_ACCOUNT_ID, 1_000_000, 'test');
        await store.setMonthlyBudget(DEFAULT_ACCOUNT_ID, 60_000, 'test');
        // Each request holds 1,000 and costs 300..999: the daily limit (50,000) binds first.
        const outcomes = await Promise.all(
          Array.from({ length: 200 }, async (_, index) => {
            const id = `rcpt_${index}`;
            const decision = await store.placeHold(sampleHold({ id, amountNano: 1_000 }), 50_000);
            const costNano = decision.placed ? 300 + ((index * 37) % 700) : 0;
            await store.recordReceipt(
              sampleReceipt({ id, keyId: key, holdNano: decision.placed ? 1_000 : 0, costNano, createdAt: `${DAY}T10:00:00.000Z` }),
            );
            return costNano;
          }),
        );
        const charged = outcomes.reduce((sum, cost) => sum + cost, 0);
        const day = await store.keyDaySpend(key, DAY);
        assert.deepEqual(day, { chargedNano: charged, heldNano: 0 });
        assert.ok(charged <= 50_000, `charged ${charged} past the daily limit`);
        assert.ok(outcomes.filter((cost) => cost > 0).length >= 50, 'at least the limit / hold requests were served');
        assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 1_000_000 - charged);
        assert.equal((await store.accountSummary(DEFAULT_ACCOUNT_ID, MONTH)).monthChargedNano, charged);
        assert.deepEqual(await store.listHolds(DEFAULT_ACCOUNT_ID), []);
        await assertInvariant(store);
      }));

    test('concurrent holds with and without a daily limit share the balance exactly', () =>
      withStore(async (store) => {
        await store.addFunds(DEFAULT_ACCOUNT_ID, 50_500, 'test');
        await store.placeHold(sampleHold({ id: 'rcpt_first' }), null);
        const decisions = await Promise.all(
          Array.from({ length: 100 }, (_, index) =>
            // Placing rcpt_first again (a retry) holds nothing more.
            store.placeHold(sampleHold({ id: index === 0 ? 'rcpt_first' : `rcpt_${index}` }), index % 2 === 0 ? 1_000_000 : null),
          ),
        );
        assert.equal(decisions.filter((decision) => decision.placed).length, 50);
        const refused = decisions.filter((decision) => !decision.placed);
        assert.ok(refused.every((decision) => !decision.placed && decision.reason === 'insufficient_balance' && decision.remainingNano === 500));
        assert.equal((await store.accountSummary(DEFAULT_ACCOUNT_ID, MONTH)).heldNano, 50_000);
      }));

    test("with a hold journal: holds are listed and counted, a dead owner's recovered at their estimate, the books exact", () =>
      withStore(async (store) => {
        const journal = createMemoryHoldJournal();
        store.useHoldJournal?.(journal);
        const later = '2099-01-01T00:00:00.000Z';
        await store.addFunds(DEFAULT_ACCOUNT_ID, 10_000_000, 'test');
        for (let index = 0; index < 5; index++)
          assert.deepEqual(await store.placeHold(sampleHold({ id: `rcpt_j${index}`, expiresAt: later, estimatedCostNano: 100 }), null), {
            placed: true,
          });
        await store.recordReceipt(
          sampleReceipt({ id: 'rcpt_j0', keyId: 'key_000000001aaaaaaaaaaaa', holdNano: 1_000, costNano: 300, createdAt: `${DAY}T10:00:00.000Z` }),
        );
        await store.recordReceipt(
          sampleReceipt({ id: 'rcpt_j1', keyId: 'key_000000001aaaaaaaaaaaa', holdNano: 1_000, costNano: 300, createdAt: `${DAY}T10:00:00.000Z` }),
        );
        assert.deepEqual(
          (await store.listHolds(DEFAULT_ACCOUNT_ID)).map((hold) => [hold.id, hold.estimatedCostNano]),
          [
            ['rcpt_j2', 100],
            ['rcpt_j3', 100],
            ['rcpt_j4', 100],
          ],
        );
        const summary = await store.accountSummary(DEFAULT_ACCOUNT_ID, MONTH);
        assert.deepEqual([summary.heldNano, summary.holdCount, summary.monthHeldNano], [3_000, 3, 3_000]);

        const released = await store.releaseOrphanedHolds(new Date().toISOString(), (owner) => owner === 'host/1/a');
        assert.deepEqual(released.map((receipt) => [receipt.id, receipt.status, receipt.costNano]).sort(), [
          ['rcpt_j2', 'failed', 100],
          ['rcpt_j3', 'failed', 100],
          ['rcpt_j4', 'failed', 100],
        ]);
        assert.deepEqual(await store.listHolds(DEFAULT_ACCOUNT_ID), []);
        assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 10_000_000 - 900);
        assert.equal(journal.size(), 0, 'nothing left in the journal');
        await assertInvariant(store);
      }));

    test('hundreds of concurrent holds never overspend', () =>
      withStore(async (store) => {
        await store.addFunds(DEFAULT_ACCOUNT_ID, 5_000, 'test');
        const decisions = await Promise.all(
          Array.from({ length: 300 }, (_, index) => store.placeHold(sampleHold({ id: `rcpt_${index}`, amountNano: 1_000 }), null)),
        );
        assert.equal(decisions.filter((decision) => decision.placed).length, 5);
        assert.equal((await store.accountSummary(DEFAULT_ACCOUNT_ID, MONTH)).heldNano, 5_000);
      }));
  });
}
