import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { issueApiKey } from '../src/auth/issue-api-key.ts';
import { worstCaseCost } from '../src/billing/worst-case.ts';
import { PromptMeasure } from '../src/tokens/token-estimate.ts';
import { ModelCatalog } from '../src/routing/model-catalog.ts';
import { parseChatCompletionRequest } from '../src/formats/openai-chat/parse-chat-request.ts';
import { DEFAULT_ACCOUNT_ID, type Store } from '../src/storage/store.ts';
import type { FakeUpstream } from './fake-upstream/fake-upstream.ts';
import { whenTrue } from './helpers/burst-gate.ts';
import { startGatewayFleet, type GatewayFleet } from './helpers/gateway-fleet.ts';
import { Redis } from 'ioredis';
import { createRedisHoldJournal, DEFAULT_HOLD_JOURNAL_PREFIX } from '../src/storage/postgres/redis-hold-journal.ts';
import { deleteKeysUnder, REDIS_TEST_URL } from './helpers/redis-test-connection.ts';
import { startGatewayProcess, type GatewayProcess } from './helpers/gateway-process.ts';
import { postgresUnreachable, reportPostgresUnreachable } from './helpers/postgres-test-connection.ts';

const body = { model: 'up/alpha', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 1000 };
const BURST = 500;

const missing = await postgresUnreachable();

if (missing !== null) {
  reportPostgresUnreachable('ledger exactness across processes', missing);
} else {
  /**
   * The ledger's promises under load, across three real processes sharing PostgreSQL and Redis
   * (each gathering its holds and settlements into batches): no overspend of the balance, a
   * key's daily limit or the monthly budget; a receipt for every request; receipts summing to
   * the balance's change to the nano-dollar; and a process killed mid-load losing nothing, its
   * holds and its balance lease recovered by a survivor.
   */
  describe('ledger exactness: 500 parallel requests over three processes', () => {
    let fleet: GatewayFleet;
    let admin: pg.Pool;
    let configPath: string;
    let env: Record<string, string>;
    let fake: FakeUpstream;
    let store: Store;
    let gateways: GatewayProcess[] = [];
    let worst: number;
    let journalRedis: Redis | undefined;
    let journalScope: string | undefined;

    before(async () => {
      fleet = await startGatewayFleet({ name: 'exact', extraConfig: 'limits: { hold_ttl_seconds: 6, default_rate_limit_per_minute: 0 }' });
      ({ fake, store, gateways, configPath, env, sql: admin } = fleet);
      // The processes journal the holds of their leases in Redis: this store reads them there too.
      journalRedis = new Redis(REDIS_TEST_URL);
      store.useHoldJournal!(createRedisHoldJournal(journalRedis));
      journalScope = (await fleet.sql.query<{ id: string }>('SELECT id FROM ledger_identity')).rows[0]!.id;
      worst = worstCaseCost(new PromptMeasure(parseChatCompletionRequest(body).request), [new ModelCatalog(fleet.config).models.get('up/alpha')!]);
    });

    after(async () => {
      await fleet?.close();
      // What the processes killed at the end left in the journal.
      if (journalScope) await deleteKeysUnder(journalRedis!, `${DEFAULT_HOLD_JOURNAL_PREFIX}${journalScope}`);
      journalRedis?.disconnect();
    });

    const post = (gateway: GatewayProcess, key: string) =>
      fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
        .then(async (response) => ({ status: response.status, json: (await response.json()) as any }))
        .catch((error: Error) => ({ status: 0, json: { error: { code: error.message } } }));

    /**
     * Replies for `count` requests, each with its own output size: every receipt costs a different
     * amount, all below the worst case. Each waits `wait` ms, or until `wait` resolves.
     */
    function scriptReplies(count: number, wait: number | Promise<unknown>): void {
      fake.script(
        'alpha',
        ...Array.from({ length: count }, (_, index) => ({
          text: 'ok',
          ...(typeof wait === 'number' ? { headerDelayMs: wait } : { until: wait }),
          usage: { prompt: 12, completion: 1 + ((index * 37) % 999) },
        })),
      );
    }

    async function receiptsOf(keyIds: string[]): Promise<{ count: number; cost: number }> {
      const { rows } = await admin.query<{ count: string; cost: string }>(
        'SELECT count(*) AS count, coalesce(sum(cost_nano), 0) AS cost FROM receipts WHERE key_id = ANY($1::text[])',
        [keyIds],
      );
      return { count: Number(rows[0]!.count), cost: Number(rows[0]!.cost) };
    }

    async function assertBooksBalance(): Promise<void> {
      const totals = await store.ledgerTotals(DEFAULT_ACCOUNT_ID);
      assert.equal(totals.funds - totals.charges, await store.getBalance(DEFAULT_ACCOUNT_ID), 'funds added minus receipts = balance');
      assert.deepEqual(await store.listHolds(DEFAULT_ACCOUNT_ID), [], 'no hold outlives its request');
    }

    test('the monthly budget and a key daily limit: never passed, every request has a receipt, receipts = the balance change', async () => {
      await store.addFunds(DEFAULT_ACCOUNT_ID, worst * 10_000, 'test');
      const month = new Date().toISOString().slice(0, 7);
      const day = new Date().toISOString().slice(0, 10);
      const spentBefore = (await store.accountSummary(DEFAULT_ACCOUNT_ID, month)).monthChargedNano;
      await store.setMonthlyBudget(DEFAULT_ACCOUNT_ID, spentBefore + worst * 120, 'test');
      const limited = await issueApiKey(store, { name: 'limited', dailyLimitNano: worst * 50 });
      const free = await issueApiKey(store, { name: 'free' });
      const balanceBefore = await store.getBalance(DEFAULT_ACCOUNT_ID);

      // Every answer waits, so all 500 hold at once: the limits are decided on holds alone.
      scriptReplies(BURST, 3_000);
      const results = await Promise.all(
        Array.from({ length: BURST }, (_, index) => post(gateways[index % gateways.length]!, index % 2 === 0 ? limited.key : free.key)),
      );
      const served = results.filter((result) => result.status === 200);
      const servedLimited = results.filter((result, index) => result.status === 200 && index % 2 === 0);
      assert.equal(served.length, 120, 'exactly the budget in worst cases');
      assert.ok(servedLimited.length <= 50, `the limited key was served ${servedLimited.length} times`);
      assert.ok(
        results.filter((result) => result.status !== 200).every((result) => result.status === 402 && result.json.error.code === 'budget_exceeded'),
        `refusals: ${[...new Set(results.filter((result) => result.status !== 200).map((result) => result.json.error.code))].join(', ')}`,
      );

      const receipts = await receiptsOf([limited.record.id, free.record.id]);
      assert.equal(receipts.count, BURST, 'one receipt per request');
      assert.equal(balanceBefore - (await store.getBalance(DEFAULT_ACCOUNT_ID)), receipts.cost, 'receipts equal the balance change, to the nano');
      const summary = await store.accountSummary(DEFAULT_ACCOUNT_ID, month);
      assert.equal(summary.monthChargedNano - spentBefore, receipts.cost);
      assert.ok(summary.monthChargedNano <= spentBefore + worst * 120);
      const limitedDay = await store.keyDaySpend(limited.record.id, day);
      assert.equal(limitedDay.chargedNano, (await receiptsOf([limited.record.id])).cost);
      assert.ok(limitedDay.chargedNano <= worst * 50);
      await store.setMonthlyBudget(DEFAULT_ACCOUNT_ID, null, 'test');
      await assertBooksBalance();
    });

    test('a key with a daily limit far from it: its holds go into key leases on every process, its day and the books exact', async () => {
      await store.addFunds(DEFAULT_ACCOUNT_ID, worst * 100_000, 'test');
      const day = new Date().toISOString().slice(0, 10);
      // Room for 16 key leases of 256 worst cases, and then some.
      const limited = await issueApiKey(store, { name: 'roomy', dailyLimitNano: worst * 20_000 });
      const balanceBefore = await store.getBalance(DEFAULT_ACCOUNT_ID);
      // No answer before every process holds a key lease: no hold is freed while they are looked for.
      fake.reset(); // no reply left over from an earlier test, sent at once
      let answer: () => void;
      scriptReplies(300, new Promise<void>((resolve) => (answer = resolve)));
      const pending = Promise.all(Array.from({ length: 300 }, (_, index) => post(gateways[index % gateways.length]!, limited.key)));
      let keyLeases = 0;
      await whenTrue(async () => {
        const { rows } = await admin.query<{ n: number }>('SELECT count(DISTINCT owner)::int AS n FROM balance_leases WHERE key_id = $1', [
          limited.record.id,
        ]);
        keyLeases = rows[0]!.n;
        return keyLeases >= gateways.length;
      });
      answer!();
      assert.equal(keyLeases, gateways.length, 'a key lease on every process');
      const results = await pending;
      assert.ok(
        results.every((result) => result.status === 200),
        'all served',
      );
      const receipts = await receiptsOf([limited.record.id]);
      assert.equal(receipts.count, 300);
      assert.equal(balanceBefore - (await store.getBalance(DEFAULT_ACCOUNT_ID)), receipts.cost, 'receipts equal the balance change, to the nano');
      assert.deepEqual(await store.keyDaySpend(limited.record.id, day), { chargedNano: receipts.cost, heldNano: 0 }, "the key's day, to the nano");
      await assertBooksBalance();
    });

    test('the balance: exactly what it covers is served, never overdrawn', async () => {
      // An account of its own, holding exactly 75.5 worst cases.
      const account = 'acct_exact_balance';
      const { key, record } = await issueApiKey(store, { name: 'balance', accountId: account });
      const target = worst * 75 + Math.floor(worst / 2);
      await store.addFunds(account, target, 'test');

      scriptReplies(BURST, 3_000);
      const results = await Promise.all(Array.from({ length: BURST }, (_, index) => post(gateways[index % gateways.length]!, key)));
      assert.equal(results.filter((result) => result.status === 200).length, 75);
      assert.ok(results.filter((result) => result.status !== 200).every((result) => result.json.error.code === 'insufficient_balance'));
      const receipts = await receiptsOf([record.id]);
      assert.equal(receipts.count, BURST);
      const balance = await store.getBalance(account);
      assert.equal(target - balance, receipts.cost, 'receipts equal the balance change, to the nano');
      assert.ok(balance >= 0);
      const totals = await store.ledgerTotals(account);
      assert.equal(totals.funds - totals.charges, balance);
      assert.deepEqual(await store.listHolds(account), []);
    });

    test('a process killed with SIGKILL mid-load: a survivor recovers its holds, the others finish, nothing lost', async () => {
      // Enough for every process to take a balance lease (the account spares sixteen of each).
      await store.addFunds(DEFAULT_ACCOUNT_ID, worst * 10_000, 'test');
      const victim = await startGatewayProcess(configPath, env);
      const doomed = await issueApiKey(store, { name: 'doomed' });
      const surviving = await issueApiKey(store, { name: 'surviving' });
      const balanceBefore = await store.getBalance(DEFAULT_ACCOUNT_ID);
      // No answer before the victim is killed: all 300 hold until then.
      fake.reset(); // no reply left over from an earlier test, sent at once
      let answer: () => void;
      scriptReplies(300, new Promise<void>((resolve) => (answer = resolve)));
      const victimRequests = Array.from({ length: 100 }, () => post(victim, doomed.key));
      const survivorRequests = Array.from({ length: 200 }, (_, index) => post(gateways[index % gateways.length]!, surviving.key));
      await whenTrue(async () => (await store.listHolds(DEFAULT_ACCOUNT_ID)).length >= 300, { everyMs: 25 });
      const victimHolds = (await store.listHolds(DEFAULT_ACCOUNT_ID)).filter((hold) => hold.keyId === doomed.record.id);
      assert.equal(victimHolds.length, 100, 'every request of the victim holds');
      const rows = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM holds WHERE key_id = $1', [doomed.record.id]);
      assert.equal(rows.rows[0]!.n, 0, "the victim's holds are in its balance lease, journaled in Redis: no row");
      await victim.stop('SIGKILL');
      answer!();
      const survived = await Promise.all(survivorRequests);
      assert.ok(
        survived.every((result) => result.status === 200),
        'the other processes serve theirs',
      );
      assert.ok((await Promise.all(victimRequests)).every((result) => result.status === 0));
      // A survivor's next sweep (every hold TTL / 3 = 2 s) finds the dead owner.
      for (let tries = 0; (await store.listHolds(DEFAULT_ACCOUNT_ID)).length > 0 && tries < 300; tries++) await sleep(100);
      assert.deepEqual(await store.listHolds(DEFAULT_ACCOUNT_ID), [], 'recovered by a survivor');
      const leases = await admin.query('SELECT id FROM balance_leases WHERE owner = $1', [victimHolds[0]!.owner]);
      assert.deepEqual(leases.rows, [], 'and its lease');
      const recovered = await admin.query<{ status: string; cost_nano: string; usage_estimated: boolean }>(
        'SELECT status, cost_nano, usage_estimated FROM receipts WHERE key_id = $1',
        [doomed.record.id],
      );
      assert.equal(recovered.rows.length, 100, 'a receipt for every request of the dead process');
      const estimate = victimHolds[0]!.estimatedCostNano!;
      assert.ok(estimate > 0);
      assert.ok(recovered.rows.every((row) => row.status === 'failed' && Number(row.cost_nano) === estimate && row.usage_estimated));
      const receipts = await receiptsOf([doomed.record.id, surviving.record.id]);
      assert.equal(receipts.count, 300);
      assert.equal(balanceBefore - (await store.getBalance(DEFAULT_ACCOUNT_ID)), receipts.cost, 'receipts equal the balance change');
      await assertBooksBalance();
    });
  });
}
