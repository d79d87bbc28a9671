import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { issueApiKey } from '../src/auth/issue-api-key.ts';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';

/**
 * API-key auth, rate limits and metering belong to the /v1 plugin's scopes: a route outside them
 * never reads a key, and a credential the key check would refuse changes nothing there.
 */
let harness: Harness;
before(async () => {
  harness = await startHarness();
});
after(() => harness.close());

/** Two Authorization lines: the key check refuses them (invalid_api_key) wherever it runs. */
const refusedCredentials: [string, string][] = [
  ['authorization', 'Bearer svc_not_a_key'],
  ['authorization', 'Bearer svc_another'],
];

/** Whether a body is the key check's refusal. */
function refusedForKey(text: string): boolean {
  try {
    return (JSON.parse(text) as { error?: { code?: string } }).error?.code === 'invalid_api_key';
  } catch {
    return false;
  }
}

describe('routes outside the /v1 key scopes', () => {
  for (const path of ['/health', '/ready', '/metrics', '/v1/openapi.json', '/login', '/console']) {
    test(`${path} never runs the key check, and has its request id`, async () => {
      const response = await fetch(`${harness.gateway.url}${path}`, { headers: refusedCredentials });
      const text = await response.text();
      assert.notEqual(response.status, 401, `${path}: ${text.slice(0, 200)}`);
      assert.ok(!refusedForKey(text), path);
      assert.match(response.headers.get('x-svc-request-id') ?? '', /^req_/);
      assert.equal(response.headers.get('x-svc-receipt-id'), null);
    });
  }

  test('the console API answers with its own session check, not the API key one', async () => {
    const response = await fetch(`${harness.gateway.url}/console/api/session`, { headers: { authorization: `Bearer ${harness.key}` } });
    assert.equal(response.status, 401);
    assert.ok(!refusedForKey(await response.text()));
  });
});

describe('inside /v1', () => {
  test('an unknown path is the not_found envelope without a key, in the format the client speaks', async () => {
    const openai = await fetch(`${harness.gateway.url}/v1/no-such-route`);
    const openaiBody = (await openai.json()) as { error: { code: string; request_id: string } };
    assert.deepEqual([openai.status, openaiBody.error.code], [404, 'not_found']);
    assert.equal(openaiBody.error.request_id, openai.headers.get('x-svc-request-id'));

    const anthropic = await fetch(`${harness.gateway.url}/v1/no-such-route`, { headers: { 'anthropic-version': '2023-06-01' } });
    const anthropicBody = (await anthropic.json()) as { type: string; error: { type: string; code: string } };
    assert.deepEqual(
      [anthropic.status, anthropicBody.type, anthropicBody.error.type, anthropicBody.error.code],
      [404, 'error', 'not_found_error', 'not_found'],
    );
  });

  test('every route checks the key; only model requests get a receipt', async () => {
    for (const path of ['/v1/models', '/v1/receipts', '/v1/balance', '/v1/fix/agents']) {
      const refused = await fetch(`${harness.gateway.url}${path}`, { headers: refusedCredentials });
      assert.equal(refused.status, 401, path);
      const served = await harness.get(path);
      assert.equal(served.status, 200, path);
      assert.equal(served.headers.get('x-svc-receipt-id'), null, path);
    }
    const chat = await harness.post('/v1/chat/completions', { model: 'up/alpha', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(chat.status, 200);
    assert.match(chat.headers.get('x-svc-receipt-id') ?? '', /^rcpt_/);
    const count = await harness.post('/v1/messages/count_tokens', { model: 'up/alpha', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(count.status, 200);
    assert.equal(count.headers.get('x-svc-receipt-id'), null, 'a free count has no receipt');
  });

  test("reads never eat a key's rate limit; model requests do, and a refused one has its receipt", async () => {
    const { key: limited } = await issueApiKey(harness.gateway.deps.store, { name: 'limited', scopes: ['inference'], rateLimitPerMinute: 1 });
    for (let index = 0; index < 3; index++) assert.equal((await harness.get('/v1/models', limited)).status, 200);
    const body = { model: 'up/alpha', messages: [{ role: 'user', content: 'hi' }] };
    assert.equal((await harness.post('/v1/chat/completions', body, limited)).status, 200);
    const refused = await harness.post('/v1/chat/completions', body, limited);
    assert.equal(refused.status, 429);
    const receiptId = refused.headers.get('x-svc-receipt-id');
    assert.match(receiptId ?? '', /^rcpt_/);
    const receipt = (await (await harness.get(`/v1/receipts/${receiptId}`)).json()) as { status: string; error_code: string; cost: string };
    assert.deepEqual([receipt.status, receipt.error_code, receipt.cost], ['failed', 'rate_limit_exceeded', '0.000000000']);
  });
});
