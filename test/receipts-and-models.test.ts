import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';

let harness: Harness;

before(async () => {
  harness = await startHarness();
});
after(() => harness.close());
beforeEach(() => harness.fake.reset());

test('a receipt carries the exact cost of the usage at the model prices', async () => {
  // up/alpha: $0.40 input, $0.10 cached, $1.60 output per 1M tokens.
  harness.fake.script('alpha', { text: 'ok', usage: { prompt: 1234, cached: 1000, completion: 57, reasoning: 0 } });
  const response = await harness.post('/v1/chat/completions', {
    model: 'svc/fast',
    messages: [{ role: 'user', content: 'price me' }],
    max_tokens: 100,
  });
  assert.equal(response.status, 200);
  const receipt = await (await harness.get(`/v1/receipts/${response.headers.get('x-svc-receipt-id')}`)).json();
  // 234 x 400 + 1000 x 100 + 57 x 1600 = 93600 + 100000 + 91200 nano-USD... per 1M: divide by 1e6 of nano-per-1M
  // 234 * 0.40 / 1e6 = 0.0000936, 1000 * 0.10 / 1e6 = 0.0001, 57 * 1.60 / 1e6 = 0.0000912 -> 0.0002848
  assert.equal(receipt.cost, '0.000284800');
  assert.equal(receipt.status, 'succeeded');
  assert.equal(receipt.request_id, response.headers.get('x-svc-request-id'));
  assert.equal(receipt.requested_model, 'svc/fast');
  assert.equal(receipt.model, 'up/alpha');
  assert.equal(receipt.endpoint, 'chat.completions');
  assert.deepEqual(receipt.usage, { prompt_tokens: 1234, cached_tokens: 1000, cache_write_tokens: 0, completion_tokens: 57, reasoning_tokens: 0 });
  assert.deepEqual(receipt.prices_per_million_tokens, {
    input: '0.400000000',
    cached_input: '0.100000000',
    cache_write: '0.400000000',
    output: '1.600000000',
  });
  assert.ok(Number(receipt.hold) > 0, 'the worst case was computed');
  assert.match(receipt.key.prefix, /^svc_/);
  assert.equal(typeof receipt.latency_ms, 'number');
  assert.equal(typeof receipt.time_to_first_token_ms, 'number');
});

test('reasoning tokens are billed as output and cache writes at the cache-write price', async () => {
  // anth/claude: $3 input, $0.30 cached, $3.75 cache write, $15 output.
  harness.fake.script('claude-x', { text: 'ok', usage: { prompt: 2000, cached: 1000, cacheWrite: 500, completion: 300 } });
  const response = await harness.post('/v1/chat/completions', { model: 'anth/claude', messages: [{ role: 'user', content: 'x' }], max_tokens: 4000 });
  const receipt = await (await harness.get(`/v1/receipts/${response.headers.get('x-svc-receipt-id')}`)).json();
  // 500 x 3 + 1000 x 0.30 + 500 x 3.75 + 300 x 15 = 1500 + 300 + 1875 + 4500 = 8175 USD per 1M -> 0.008175
  assert.equal(receipt.cost, '0.008175000');

  harness.fake.script('beta', { text: 'ok', reasoning: 'hmm', usage: { prompt: 100, completion: 900, reasoning: 800 } });
  const beta = await harness.post('/v1/chat/completions', { model: 'up/beta', messages: [{ role: 'user', content: 'x' }] });
  const betaReceipt = await (await harness.get(`/v1/receipts/${beta.headers.get('x-svc-receipt-id')}`)).json();
  // 100 x 2 + 900 x 8 = 7400 per 1M -> 0.0074
  assert.equal(betaReceipt.cost, '0.007400000');
  assert.equal(betaReceipt.usage.reasoning_tokens, 800);
});

test('a provider reporting more than was held is charged in full, and the receipt says so', async () => {
  const store = harness.gateway.deps.store;
  const before = await store.getBalance('default');
  harness.fake.script('alpha', { text: 'ok', usage: { prompt: 10, completion: 50_000 } });
  const response = await harness.post('/v1/chat/completions', { model: 'up/alpha', messages: [{ role: 'user', content: 'x' }], max_tokens: 10 });
  const receipt = await (await harness.get(`/v1/receipts/${response.headers.get('x-svc-receipt-id')}`)).json();
  assert.equal(receipt.exceeded_hold, true);
  // 10 x 0.40 + 50000 x 1.60 = 80004 USD per 1M -> 0.080004
  assert.equal(receipt.cost, '0.080004000');
  assert.equal(before - (await store.getBalance('default')), 80_004_000);
});

test('GET /v1/receipts: newest first, limit, before, has_more; bad limits are invalid_request', async () => {
  const ids: string[] = [];
  for (let index = 0; index < 3; index++) {
    const response = await harness.post('/v1/chat/completions', { model: 'up/alpha', messages: [{ role: 'user', content: `n${index}` }] });
    ids.push(response.headers.get('x-svc-receipt-id')!);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const page = await (await harness.get('/v1/receipts?limit=2')).json();
  assert.equal(page.object, 'list');
  assert.deepEqual(
    page.data.map((receipt: any) => receipt.id),
    [ids[2], ids[1]],
  );
  assert.equal(page.has_more, true);
  const next = await (await harness.get(`/v1/receipts?limit=2&before=${encodeURIComponent(page.data[1].created_at)}`)).json();
  assert.equal(next.data[0].id, ids[0]);
  for (const limit of ['0', '101', 'abc', '1.5']) {
    const response = await harness.get(`/v1/receipts?limit=${limit}`);
    assert.equal(response.status, 400);
    assert.equal((await response.json()).error.code, 'invalid_request');
  }
  const badBefore = await harness.get('/v1/receipts?before=yesterday');
  assert.equal((await badBefore.json()).error.code, 'invalid_request');
});

test('GET /v1/models lists aliases and models with prices for an all-models key', async () => {
  const response = await harness.get('/v1/models');
  assert.equal(response.status, 200);
  const list = await response.json();
  assert.equal(list.object, 'list');
  const ids = list.data.map((entry: any) => entry.id);
  assert.deepEqual(ids, ['svc/fast', 'svc/balanced', 'svc/best', 'up/alpha', 'up/beta', 'anth/claude', 'up/tiny']);
  const alpha = list.data.find((entry: any) => entry.id === 'up/alpha');
  assert.deepEqual(alpha.pricing, {
    unit: 'USD per 1M tokens',
    input: '0.400000000',
    cached_input: '0.100000000',
    cache_write: '0.400000000',
    output: '1.600000000',
  });
  assert.equal(alpha.object, 'model');
  const fast = list.data.find((entry: any) => entry.id === 'svc/fast');
  assert.deepEqual(fast.candidates, ['up/alpha', 'up/beta']);
  assert.equal(fast.default_reasoning_effort, 'low');
  assert.equal(fast.pricing.output, '8.000000000');
});
