import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sampleHold } from './ledger-contract.ts';
import { recoveredFixRunResult } from '../storage/orphan-receipt.ts';
import type { FixQuoteRecord, FixRunRecord, FixRunStart, HoldRecord } from '../storage/records.ts';
import { asStored, sampleKey, sampleReceipt, storeRunner } from './store-samples.ts';
import { DEFAULT_ACCOUNT_ID, type Store } from '../storage/store.ts';

const OTHER_ACCOUNT = 'acct_other';
const DAY = '2026-11-21';
const MONTH = '2026-11';
const KEY_ID = 'key_000000001aaaaaaaaaaaa';
const MAX_COST = 40_000;

export function sampleFixQuote(overrides: Partial<FixQuoteRecord> = {}): FixQuoteRecord {
  return {
    id: 'quote_0001',
    accountId: DEFAULT_ACCOUNT_ID,
    keyId: KEY_ID,
    agent: 'fix-type-error',
    tier: 'balanced',
    // Keys deliberately out of alphabetical order: the input must come back exactly as sent.
    input: {
      zeta: 'last',
      files: [{ path: 'src/a.ts', content: 'const a: number = "x";\n' }],
      alpha: { nested: [1, 2.5, null, true] },
      note: 'é ✓ "quoted"',
    },
    inputTokens: 1_234,
    estimatedCostNano: 12_345,
    maxCostNano: MAX_COST,
    stepBudget: 6,
    createdAt: `${DAY}T10:00:00.000Z`,
    expiresAt: `${DAY}T10:15:00.000Z`,
    ...overrides,
  };
}

/** A run of quote `quoteId` named by `suffix`: run_<suffix>, its hold and receipt rcpt_<suffix>. */
export function sampleFixRun(suffix: string, overrides: Partial<FixRunRecord> = {}): FixRunRecord {
  return {
    id: `run_${suffix}`,
    quoteId: 'quote_0001',
    accountId: DEFAULT_ACCOUNT_ID,
    keyId: KEY_ID,
    receiptId: `rcpt_${suffix}`,
    agent: 'fix-type-error',
    tier: 'balanced',
    maxCostNano: MAX_COST,
    status: 'running',
    createdAt: `${DAY}T10:01:00.000Z`,
    finishedAt: null,
    result: null,
    cancelRequested: false,
    ...overrides,
  };
}

function holdOf(run: FixRunRecord, overrides: Partial<HoldRecord> = {}): HoldRecord {
  return sampleHold({
    id: run.receiptId,
    accountId: run.accountId,
    keyId: run.keyId,
    endpoint: 'fix.runs',
    amountNano: run.maxCostNano,
    ...overrides,
  });
}

function receiptOf(run: FixRunRecord, costNano: number) {
  return sampleReceipt({
    id: run.receiptId,
    keyId: run.keyId,
    endpoint: 'fix.runs',
    holdNano: run.maxCostNano,
    costNano,
    createdAt: `${DAY}T10:02:00.000Z`,
  });
}

/** Fix agents' storage every Store backend must show: quotes, runs started once, events, settling, recovery. */
export function runFixStoreContract(name: string, makeStore: () => Promise<Store>): void {
  const run = storeRunner(makeStore);
  /** A store with the key, 1,000,000 nano of funds and quote_0001. */
  const withQuote = (body: (store: Store) => Promise<void>) =>
    run(async (store) => {
      await store.insertKey(sampleKey());
      await store.insertKey(sampleKey({ id: 'key_other', hash: 'hash-other', accountId: OTHER_ACCOUNT }));
      await store.addFunds(DEFAULT_ACCOUNT_ID, 1_000_000, 'test');
      await store.insertFixQuote(sampleFixQuote());
      await body(store);
    });

  async function start(store: Store, suffix: string, dailyLimitNano: number | null = null): Promise<{ run: FixRunRecord; start: FixRunStart }> {
    const fixRun = sampleFixRun(suffix);
    return { run: fixRun, start: await store.startFixRun(fixRun, holdOf(fixRun), dailyLimitNano) };
  }

  async function assertInvariant(store: Store): Promise<void> {
    const totals = await store.ledgerTotals(DEFAULT_ACCOUNT_ID);
    assert.equal(totals.funds - totals.charges, await store.getBalance(DEFAULT_ACCOUNT_ID), 'funds - charges = balance');
  }

  describe(`Fix store contract: ${name}`, () => {
    test('a quote round-trips: input JSON as sent, money exact; another account sees nothing', () =>
      withQuote(async (store) => {
        const big = sampleFixQuote({ id: 'quote_big', estimatedCostNano: 9_007_199_254_740_000, maxCostNano: 9_007_199_254_740_991, tier: 'best' });
        await store.insertFixQuote(big);
        const read = await store.getFixQuote(DEFAULT_ACCOUNT_ID, 'quote_big');
        assert.deepEqual(read, big);
        assert.equal(JSON.stringify(read?.input), JSON.stringify(big.input), 'key order kept');
        assert.deepEqual(await store.getFixQuote(DEFAULT_ACCOUNT_ID, 'quote_0001'), sampleFixQuote());
        assert.equal(await store.getFixQuote(OTHER_ACCOUNT, 'quote_big'), null);
        assert.equal(await store.getFixQuote(DEFAULT_ACCOUNT_ID, 'quote_missing'), null);
        await assert.rejects(store.insertFixQuote(sampleFixQuote({ id: 'quote_neg', maxCostNano: -1 })));
      }));

    test('a quote starts once: its hold is placed with the run; a second start returns the run and holds nothing', () =>
      withQuote(async (store) => {
        const first = await start(store, 'a1');
        assert.deepEqual(first.start, { started: true });
        assert.deepEqual(await store.getFixRun(DEFAULT_ACCOUNT_ID, 'run_a1'), first.run);
        assert.deepEqual(
          (await store.listHolds(DEFAULT_ACCOUNT_ID)).map((hold) => [hold.id, hold.amountNano]),
          [['rcpt_a1', MAX_COST]],
        );

        const second = await start(store, 'a2');
        assert.deepEqual(second.start, { started: false, existing: first.run });
        assert.equal(await store.getFixRun(DEFAULT_ACCOUNT_ID, 'run_a2'), null);
        assert.deepEqual(
          (await store.listHolds(DEFAULT_ACCOUNT_ID)).map((hold) => hold.id),
          ['rcpt_a1'],
        );
        assert.equal((await store.accountSummary(DEFAULT_ACCOUNT_ID, MONTH)).heldNano, MAX_COST);
      }));

    test('a start whose hold does not fit writes nothing: balance, daily limit, monthly budget', () =>
      run(async (store) => {
        await store.insertKey(sampleKey());
        await store.addFunds(DEFAULT_ACCOUNT_ID, 30_000, 'test');
        await store.insertFixQuote(sampleFixQuote());
        const assertNothingWritten = async (suffix: string) => {
          assert.equal(await store.getFixRun(DEFAULT_ACCOUNT_ID, `run_${suffix}`), null);
          assert.deepEqual(await store.listHolds(DEFAULT_ACCOUNT_ID), []);
        };

        assert.deepEqual((await start(store, 'b1')).start, {
          started: false,
          refused: { placed: false, reason: 'insufficient_balance', remainingNano: 30_000 },
        });
        await assertNothingWritten('b1');

        await store.addFunds(DEFAULT_ACCOUNT_ID, 100_000, 'test');
        assert.deepEqual((await start(store, 'b2', 39_999)).start, {
          started: false,
          refused: { placed: false, reason: 'daily_limit', remainingNano: 39_999 },
        });
        await assertNothingWritten('b2');

        await store.setMonthlyBudget(DEFAULT_ACCOUNT_ID, 25_000, 'test');
        assert.deepEqual((await start(store, 'b3')).start, {
          started: false,
          refused: { placed: false, reason: 'monthly_budget', remainingNano: 25_000 },
        });
        await assertNothingWritten('b3');

        await store.setMonthlyBudget(DEFAULT_ACCOUNT_ID, null, 'test');
        assert.deepEqual((await start(store, 'b4', 40_000)).start, { started: true }, 'a refused quote can still run once it fits');
        assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 130_000);
      }));

    test('starts of one quote racing: exactly one starts, the others get its run, one hold', () =>
      withQuote(async (store) => {
        const suffixes = Array.from({ length: 8 }, (_, index) => `c${index}`);
        const outcomes = await Promise.all(suffixes.map((suffix) => start(store, suffix)));
        const winners = outcomes.filter((outcome) => outcome.start.started);
        assert.equal(winners.length, 1);
        const winner = winners[0]!.run;
        for (const outcome of outcomes) {
          if (outcome.start.started) continue;
          assert.ok('existing' in outcome.start, 'a losing start gets the existing run, not a refusal');
          assert.deepEqual(outcome.start.existing, winner);
        }
        assert.deepEqual(
          (await store.listHolds(DEFAULT_ACCOUNT_ID)).map((hold) => hold.id),
          [winner.receiptId],
        );
        assert.equal((await store.accountSummary(DEFAULT_ACCOUNT_ID, MONTH)).heldNano, MAX_COST);
      }));

    test('events are appended and listed after a sequence, in order; a duplicate sequence is refused', () =>
      withQuote(async (store) => {
        const { run: fixRun } = await start(store, 'd1');
        const events = [1, 2, 3].map((sequence) => ({
          runId: fixRun.id,
          sequence,
          at: `${DAY}T10:01:0${sequence}.000Z`,
          type: sequence === 3 ? 'run.finished' : 'step.started',
          data: { step: sequence, detail: { b: 1, a: [sequence] } },
        }));
        await store.appendFixRunEvent(events[1]!);
        await store.appendFixRunEvent(events[0]!);
        await store.appendFixRunEvent(events[2]!);
        assert.deepEqual(await store.listFixRunEvents(fixRun.id, 0), events);
        assert.deepEqual(await store.listFixRunEvents(fixRun.id, 1), events.slice(1));
        assert.deepEqual(await store.listFixRunEvents(fixRun.id, 3), []);
        assert.deepEqual(await store.listFixRunEvents('run_missing', 0), []);
        await assert.rejects(store.appendFixRunEvent({ ...events[1]!, type: 'again' }));
        assert.deepEqual(await store.listFixRunEvents(fixRun.id, 0), events, 'the refused duplicate changed nothing');
      }));

    test('finishing ends the run, writes its receipt, charges the cost and releases the hold; only once', () =>
      withQuote(async (store) => {
        const { run: fixRun } = await start(store, 'e1');
        const result = { patch: '--- a/src/a.ts\n+++ b/src/a.ts\n', files: { 'src/a.ts': 'ok' }, cost_nano: 12_001 };
        const receipt = receiptOf(fixRun, 12_001);
        assert.equal(await store.finishFixRun(fixRun.id, 'succeeded', result, `${DAY}T10:02:00.000Z`, receipt), true);
        assert.deepEqual(await store.getFixRun(DEFAULT_ACCOUNT_ID, fixRun.id), {
          ...fixRun,
          status: 'succeeded',
          result,
          finishedAt: `${DAY}T10:02:00.000Z`,
        });
        assert.deepEqual(await store.getReceipt(DEFAULT_ACCOUNT_ID, fixRun.receiptId), asStored(receipt));
        assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 1_000_000 - 12_001);
        assert.deepEqual(await store.listHolds(DEFAULT_ACCOUNT_ID), []);
        assert.deepEqual(await store.keyDaySpend(KEY_ID, DAY), { chargedNano: 12_001, heldNano: 0 });
        await assertInvariant(store);

        const again = { ...receipt, costNano: 5, status: 'failed' as const };
        assert.equal(await store.finishFixRun(fixRun.id, 'failed', { error: 'late' }, `${DAY}T10:03:00.000Z`, again), false);
        assert.equal((await store.getFixRun(DEFAULT_ACCOUNT_ID, fixRun.id))?.status, 'succeeded');
        assert.deepEqual(await store.getReceipt(DEFAULT_ACCOUNT_ID, fixRun.receiptId), asStored(receipt));
        assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 1_000_000 - 12_001);
        await assertInvariant(store);
        assert.equal(await store.finishFixRun('run_missing', 'failed', {}, `${DAY}T10:03:00.000Z`, receiptOf(sampleFixRun('zz'), 1)), false);
        assert.equal(await store.getReceipt(DEFAULT_ACCOUNT_ID, 'rcpt_zz'), null);
      }));

    test('a run whose process died ends failed with its hold released at cost 0; a late finish writes nothing', () =>
      withQuote(async (store) => {
        const fixRun = sampleFixRun('f1');
        assert.deepEqual(await store.startFixRun(fixRun, holdOf(fixRun, { owner: 'host/9/gone', expiresAt: `${DAY}T11:00:00.000Z` }), null), {
          started: true,
        });
        const now = `${DAY}T10:05:00.000Z`;
        const released = await store.releaseOrphanedHolds(now, () => true);
        assert.deepEqual(
          released.map((receipt) => receipt.id),
          [fixRun.receiptId],
        );
        assert.deepEqual(await store.getFixRun(DEFAULT_ACCOUNT_ID, fixRun.id), {
          ...fixRun,
          status: 'failed',
          result: recoveredFixRunResult(),
          finishedAt: now,
        });
        const closed = await store.getReceipt(DEFAULT_ACCOUNT_ID, fixRun.receiptId);
        assert.deepEqual([closed?.status, closed?.costNano, closed?.holdNano], ['failed', 0, MAX_COST]);
        assert.deepEqual(await store.listHolds(DEFAULT_ACCOUNT_ID), []);
        assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 1_000_000);

        assert.equal(await store.finishFixRun(fixRun.id, 'succeeded', { patch: 'late' }, `${DAY}T10:06:00.000Z`, receiptOf(fixRun, 9_000)), false);
        assert.deepEqual(await store.getReceipt(DEFAULT_ACCOUNT_ID, fixRun.receiptId), closed);
        assert.equal((await store.getFixRun(DEFAULT_ACCOUNT_ID, fixRun.id))?.status, 'failed');
        assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 1_000_000);
        await assertInvariant(store);
      }));

    test("a run whose process died is charged its hold's estimate, as a chat request, on its receipt and its result", () =>
      withQuote(async (store) => {
        const fixRun = sampleFixRun('f2');
        const hold = holdOf(fixRun, { owner: 'host/9/gone', expiresAt: `${DAY}T11:00:00.000Z`, estimatedCostNano: 4_321 });
        assert.deepEqual(await store.startFixRun(fixRun, hold, null), { started: true });
        await store.releaseOrphanedHolds(`${DAY}T10:05:00.000Z`, () => true);
        const closed = await store.getReceipt(DEFAULT_ACCOUNT_ID, fixRun.receiptId);
        assert.deepEqual([closed?.status, closed?.costNano, closed?.usageEstimated], ['failed', 4_321, true]);
        assert.deepEqual((await store.getFixRun(DEFAULT_ACCOUNT_ID, fixRun.id))?.result, recoveredFixRunResult(4_321));
        assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 1_000_000 - 4_321);
        await assertInvariant(store);
      }));

    test('recovery leaves a finished run alone', () =>
      withQuote(async (store) => {
        const { run: fixRun } = await start(store, 'g1');
        await store.finishFixRun(fixRun.id, 'cancelled', { cost_nano: 0 }, `${DAY}T10:02:00.000Z`, receiptOf(fixRun, 0));
        assert.deepEqual(await store.releaseOrphanedHolds(`${DAY}T12:00:00.000Z`, () => true), []);
        assert.equal((await store.getFixRun(DEFAULT_ACCOUNT_ID, fixRun.id))?.status, 'cancelled');
      }));

    test('cancel marks a running run of the account; another account gets null, a finished run is returned unchanged', () =>
      withQuote(async (store) => {
        const { run: fixRun } = await start(store, 'h1');
        assert.equal(await store.requestFixRunCancel(OTHER_ACCOUNT, fixRun.id), null);
        assert.equal((await store.getFixRun(DEFAULT_ACCOUNT_ID, fixRun.id))?.cancelRequested, false);
        assert.deepEqual(await store.requestFixRunCancel(DEFAULT_ACCOUNT_ID, fixRun.id), { ...fixRun, cancelRequested: true });
        assert.equal((await store.getFixRun(DEFAULT_ACCOUNT_ID, fixRun.id))?.cancelRequested, true);
        assert.equal(await store.requestFixRunCancel(DEFAULT_ACCOUNT_ID, 'run_missing'), null);

        await store.insertFixQuote(sampleFixQuote({ id: 'quote_0002' }));
        const other = sampleFixRun('h2', { quoteId: 'quote_0002' });
        await store.startFixRun(other, holdOf(other), null);
        await store.finishFixRun(other.id, 'succeeded', {}, `${DAY}T10:02:00.000Z`, receiptOf(other, 0));
        assert.equal((await store.requestFixRunCancel(DEFAULT_ACCOUNT_ID, other.id))?.cancelRequested, false);
      }));

    test('a run is read only by its own account, by id or by quote', () =>
      withQuote(async (store) => {
        assert.equal(await store.getFixRunByQuote(DEFAULT_ACCOUNT_ID, 'quote_0001'), null, 'not run yet');
        const { run: fixRun } = await start(store, 'i1');
        assert.equal(await store.getFixRun(OTHER_ACCOUNT, fixRun.id), null);
        assert.equal(await store.getFixRun(DEFAULT_ACCOUNT_ID, 'run_missing'), null);
        assert.deepEqual(await store.getFixRunByQuote(DEFAULT_ACCOUNT_ID, 'quote_0001'), fixRun);
        assert.equal(await store.getFixRunByQuote(OTHER_ACCOUNT, 'quote_0001'), null);
      }));
  });
}
