import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { worstCaseCost } from '../src/billing/worst-case.ts';
import { PromptMeasure } from '../src/tokens/token-estimate.ts';
import { parseChatCompletionRequest } from '../src/formats/openai-chat/parse-chat-request.ts';
import { formatUsd } from '../src/lib/money.ts';
import { DEFAULT_ACCOUNT_ID } from '../src/storage/store.ts';
import { burstGate } from './helpers/burst-gate.ts';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';

const body = { model: 'up/alpha', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 1000 };

let harness: Harness;
let worst: number;

before(async () => {
  harness = await startHarness({ fundsNano: 0, timeoutMs: 10_000 });
  const alpha = harness.gateway.deps.catalog.models.get('up/alpha')!;
  worst = worstCaseCost(new PromptMeasure(parseChatCompletionRequest(body).request), [alpha]);
});
after(() => harness.close());
beforeEach(() => harness.fake.reset());

async function assertLedgerInvariant() {
  const store = harness.gateway.deps.store;
  const totals = await store.ledgerTotals(DEFAULT_ACCOUNT_ID);
  assert.equal(totals.funds - totals.charges, await store.getBalance(DEFAULT_ACCOUNT_ID), 'funds added minus charges equals balance');
  assert.deepEqual(await store.listHolds(DEFAULT_ACCOUNT_ID), [], 'no hold outlives its request');
}

async function receiptOf(response: Response) {
  return (await harness.get(`/v1/receipts/${response.headers.get('x-svc-receipt-id')}`)).json() as Promise<any>;
}

/**
 * Fire `count` requests at once against an upstream that answers none of them until every one
 * is admitted or refused: no answer frees its hold before then.
 */
async function burst(count: number, key = harness.key) {
  const gate = burstGate(harness.fake, count);
  harness.fake.script('alpha', ...Array.from({ length: count }, () => ({ text: 'ok', until: gate.decided, usage: { prompt: 12, completion: 2 } })));
  return Promise.all(
    Array.from({ length: count }, async () => {
      const response = await harness.post('/v1/chat/completions', body, key);
      gate.answered();
      return { response, json: (await response.json()) as any };
    }),
  );
}

describe('holds under concurrency', () => {
  test('300 parallel requests against a balance for 5 worst cases: none overspends, every refusal is free', async () => {
    const store = harness.gateway.deps.store;
    await store.addFunds(DEFAULT_ACCOUNT_ID, worst * 5 + Math.floor(worst / 2), 'test');
    const balanceBefore = await store.getBalance(DEFAULT_ACCOUNT_ID);
    const results = await burst(300);
    const served = results.filter(({ response }) => response.status === 200);
    const refused = results.filter(({ response }) => response.status !== 200);
    assert.equal(served.length, 5, 'exactly the worst cases that fit are served at once');
    assert.equal(harness.fake.requests.length, 5, 'no provider call for a refused request');
    for (const { response, json } of refused) {
      assert.equal(response.status, 402);
      assert.equal(json.error.code, 'insufficient_balance');
      assert.equal(json.error.type, 'insufficient_quota');
    }
    const receipts = await Promise.all(results.map(({ response }) => receiptOf(response)));
    for (const [index, receipt] of receipts.entries()) {
      if (results[index]!.response.status === 200) continue;
      assert.deepEqual([receipt.status, receipt.cost, receipt.error_code], ['failed', '0.000000000', 'insufficient_balance']);
    }
    const charged = receipts.reduce((sum, receipt) => sum + BigInt(receipt.cost.replace('.', '')), 0n);
    assert.equal(BigInt(balanceBefore - (await store.getBalance(DEFAULT_ACCOUNT_ID))), charged, 'receipts add up to what left the balance');
    assert.ok((await store.getBalance(DEFAULT_ACCOUNT_ID)) >= 0);
    await assertLedgerInvariant();
  });

  test("a key's daily limit under a burst: budget_exceeded beyond it, free", async () => {
    await harness.gateway.deps.store.addFunds(DEFAULT_ACCOUNT_ID, worst * 1000, 'test');
    const { key, record } = await harness.createKey({ name: 'limited' });
    await setDailyLimit(record.id, worst * 3);
    const results = await burst(100, key);
    assert.equal(results.filter(({ response }) => response.status === 200).length, 3);
    const refused = results.filter(({ response }) => response.status !== 200);
    assert.ok(refused.every(({ response, json }) => response.status === 402 && json.error.code === 'budget_exceeded'));
    assert.match(refused[0]!.json.error.message, /daily limit/);
    const day = new Date().toISOString().slice(0, 10);
    const spend = await harness.gateway.deps.store.keyDaySpend(record.id, day);
    assert.equal(spend.heldNano, 0);
    assert.ok(spend.chargedNano > 0 && spend.chargedNano <= worst * 3);
    await assertLedgerInvariant();
  });

  test('the monthly budget under a burst', async () => {
    const store = harness.gateway.deps.store;
    await store.addFunds(DEFAULT_ACCOUNT_ID, worst * 1000, 'test');
    const month = new Date().toISOString().slice(0, 7);
    const spent = (await store.accountSummary(DEFAULT_ACCOUNT_ID, month)).monthChargedNano;
    await store.setMonthlyBudget(DEFAULT_ACCOUNT_ID, spent + worst * 4, 'test');
    try {
      const results = await burst(100);
      assert.equal(results.filter(({ response }) => response.status === 200).length, 4);
      const refused = results.filter(({ response }) => response.status !== 200);
      assert.ok(refused.every(({ response, json }) => response.status === 402 && json.error.code === 'budget_exceeded'));
      assert.match(refused[0]!.json.error.message, /monthly budget/);
      const balance = await (await harness.get('/v1/balance')).json();
      assert.equal(balance.month.budget, formatUsd(spent + worst * 4));
      await assertLedgerInvariant();
    } finally {
      await store.setMonthlyBudget(DEFAULT_ACCOUNT_ID, null, 'test');
    }
  });
});

async function setDailyLimit(keyId: string, nano: number) {
  // Another connection, as an operator tool would: the server notices through data_version.
  const Database = (await import('better-sqlite3')).default;
  const db = new Database(harness.gateway.deps.config.database.path);
  db.prepare('UPDATE api_keys SET daily_limit_nano = ? WHERE id = ?').run(nano, keyId);
  db.close();
}

describe('balance and receipts', () => {
  test('GET /v1/balance shows balance, available, holds and the month in USD strings', async () => {
    const store = harness.gateway.deps.store;
    await store.addFunds(DEFAULT_ACCOUNT_ID, worst * 10, 'test');
    harness.fake.script('alpha', { text: 'slow', headerDelayMs: 400 });
    const pending = harness.post('/v1/chat/completions', body);
    while ((await store.listHolds(DEFAULT_ACCOUNT_ID)).length === 0) await sleep(5);
    const during = await (await harness.get('/v1/balance')).json();
    assert.equal(during.object, 'balance');
    assert.equal(during.currency, 'USD');
    assert.equal(during.holds.count, 1);
    assert.equal(during.holds.total, formatUsd(worst));
    const balanceNano = await store.getBalance(DEFAULT_ACCOUNT_ID);
    assert.equal(during.balance, formatUsd(balanceNano));
    assert.equal(during.available, formatUsd(balanceNano - worst));
    assert.match(during.month.period, /^\d{4}-\d{2}$/);
    assert.equal(during.month.budget, null);
    const response = await pending;
    const receipt = await receiptOf(response);
    assert.equal(receipt.hold, formatUsd(worst), 'the receipt shows what was held');
    const after = await (await harness.get('/v1/balance')).json();
    assert.equal(after.holds.count, 0);
    assert.equal(after.available, after.balance);
  });
});

describe('rate limits', () => {
  test('429 rate_limit_exceeded with an honest retry-after, and a free receipt', async () => {
    await harness.gateway.deps.store.addFunds(DEFAULT_ACCOUNT_ID, worst * 1000, 'test');
    const { key } = await harness.createKey({ name: 'rated' });
    await setRateLimit(key, 60);
    // 60 a minute: a burst of 60 passes, then one more a second.
    const responses = await Promise.all(Array.from({ length: 75 }, () => harness.post('/v1/chat/completions', body, key)));
    const statuses = responses.map((response) => response.status);
    assert.ok(statuses.filter((status) => status === 200).length >= 60);
    const limited = responses.find((response) => response.status === 429)!;
    assert.ok(limited, 'some requests are over the limit');
    const error = (await limited.json()).error;
    assert.equal(error.code, 'rate_limit_exceeded');
    assert.equal(error.retryable, true);
    const retryAfter = Math.max(
      ...responses.filter((response) => response.status === 429).map((response) => Number(response.headers.get('retry-after'))),
    );
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `retry-after ${retryAfter}`);
    const receipt = await receiptOf(limited);
    assert.deepEqual([receipt.cost, receipt.error_code], ['0.000000000', 'rate_limit_exceeded']);
    await sleep(retryAfter * 1000);
    assert.equal((await harness.post('/v1/chat/completions', body, key)).status, 200, 'waiting retry-after seconds succeeds');
  });
});

async function setRateLimit(key: string, perMinute: number) {
  const Database = (await import('better-sqlite3')).default;
  const db = new Database(harness.gateway.deps.config.database.path);
  db.prepare('UPDATE api_keys SET rate_limit_per_minute = ? WHERE prefix = ?').run(perMinute, key.slice(0, 12));
  db.close();
}
