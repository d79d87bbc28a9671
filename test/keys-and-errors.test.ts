import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { createSqliteStore } from '../src/storage/sqlite/sqlite-store.ts';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';

let harness: Harness;

before(async () => {
  harness = await startHarness();
});
after(() => harness.close());
beforeEach(() => harness.fake.reset());

const chat = { model: 'svc/fast', messages: [{ role: 'user', content: 'hello' }] };

async function expectError(response: Response, status: number, code: string, retryable = false) {
  assert.equal(response.status, status);
  const body = await response.json();
  assert.equal(body.error.code, code);
  assert.equal(body.error.retryable, retryable);
  assert.equal(typeof body.error.message, 'string');
  assert.equal(typeof body.error.type, 'string');
  assert.equal(body.error.request_id, response.headers.get('x-svc-request-id'));
  assert.ok(!JSON.stringify(body).includes('    at '), 'no stack trace');
  return body.error;
}

test('invalid_api_key: missing, malformed, not Bearer, unknown', async () => {
  const url = `${harness.gateway.url}/v1/chat/completions`;
  const post = (headers: Record<string, string>) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(chat) });
  await expectError(await post({}), 401, 'invalid_api_key');
  await expectError(await post({ authorization: 'Bearer sk-not-ours' }), 401, 'invalid_api_key');
  await expectError(await post({ authorization: `Basic ${harness.key}` }), 401, 'invalid_api_key');
  await expectError(await post({ authorization: `Bearer svc_${'x'.repeat(40)}` }), 401, 'invalid_api_key');
  assert.equal(harness.fake.requests.length, 0);
});

test('the key is accepted as Bearer and as x-api-key', async () => {
  const response = await fetch(`${harness.gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': harness.key },
    body: JSON.stringify(chat),
  });
  assert.equal(response.status, 200);
});

test('key_revoked takes effect on the very next request, even with a warm cache', async () => {
  const { key, record } = await harness.createKey();
  assert.equal((await harness.post('/v1/chat/completions', chat, key)).status, 200);
  // Revoke through another connection to the same database, as `gateway keys revoke` does.
  const other = createSqliteStore(harness.gateway.deps.config.database.path);
  await other.revokeKey(record.accountId, record.prefix, new Date().toISOString(), 'cli');
  await other.close();
  await expectError(await harness.post('/v1/chat/completions', chat, key), 401, 'key_revoked');
});

test('a revocation made inside the gateway process takes effect on the next request too', async () => {
  const { key, record } = await harness.createKey();
  assert.equal((await harness.post('/v1/chat/completions', chat, key)).status, 200);
  // Same connection as the server: SQLite's data_version does not move, the change signal must.
  await harness.gateway.deps.store.revokeKey(record.accountId, record.id, new Date().toISOString(), 'console');
  await expectError(await harness.post('/v1/chat/completions', chat, key), 401, 'key_revoked');
});

test('key_expired', async () => {
  const { key } = await harness.createKey({ expiresAt: new Date(Date.now() - 1000).toISOString() });
  await expectError(await harness.post('/v1/chat/completions', chat, key), 401, 'key_expired');
});

test('insufficient_scope: a fix-only key cannot chat, and gets a receipt with cost 0', async () => {
  const { key } = await harness.createKey({ scopes: ['fix'] });
  const response = await harness.post('/v1/chat/completions', chat, key);
  await expectError(response, 403, 'insufficient_scope');
  const receipt = await (await harness.get(`/v1/receipts/${response.headers.get('x-svc-receipt-id')}`)).json();
  assert.equal(receipt.status, 'failed');
  assert.equal(receipt.cost, '0.000000000');
  assert.equal(receipt.error_code, 'insufficient_scope');
});

test('model_not_allowed: an allowed alias does not allow its exact model ids', async () => {
  const { key } = await harness.createKey({ models: ['svc/fast'] });
  assert.equal((await harness.post('/v1/chat/completions', chat, key)).status, 200);
  await expectError(await harness.post('/v1/chat/completions', { ...chat, model: 'up/alpha' }, key), 403, 'model_not_allowed');
  await expectError(await harness.post('/v1/chat/completions', { ...chat, model: 'svc/best' }, key), 403, 'model_not_allowed');
  // GET /v1/models lists only what the key may use.
  const models = await (await harness.get('/v1/models', key)).json();
  assert.deepEqual(
    models.data.map((model: any) => model.id),
    ['svc/fast'],
  );
});

test('invalid_request names the field; bad JSON too', async () => {
  let error = await expectError(await harness.post('/v1/chat/completions', { messages: chat.messages }), 400, 'invalid_request');
  assert.match(error.message, /model/);
  error = await expectError(await harness.post('/v1/chat/completions', { model: 'svc/fast' }), 400, 'invalid_request');
  assert.match(error.message, /messages/);
  error = await expectError(await harness.post('/v1/chat/completions', { ...chat, max_tokens: -3 }), 400, 'invalid_request');
  assert.match(error.message, /max_tokens/);
  error = await expectError(
    await harness.post('/v1/chat/completions', { ...chat, messages: [{ role: 'wizard', content: 'x' }] }),
    400,
    'invalid_request',
  );
  assert.match(error.message, /messages\[0\]\.role/);
  const badJson = await harness.post('/v1/chat/completions', '{"model": "svc/fast", "messages": [');
  error = await expectError(badJson, 400, 'invalid_request');
  assert.match(error.message, /JSON/);
  assert.ok(badJson.headers.get('x-svc-receipt-id'), 'a bad body from a valid key still gets its receipt');
  assert.equal(harness.fake.requests.length, 0);
});

test('unsupported_model', async () => {
  const error = await expectError(await harness.post('/v1/chat/completions', { ...chat, model: 'gpt-9' }), 400, 'unsupported_model');
  assert.match(error.message, /gpt-9/);
});

test('not_found for unknown paths and for receipts not on the account', async () => {
  await expectError(await harness.get('/v1/nothing-here'), 404, 'not_found');
  await expectError(await harness.get('/v1/receipts/rcpt_doesnotexist'), 404, 'not_found');
});

test('request ids and receipt ids share their suffix on errors too', async () => {
  const response = await harness.post('/v1/chat/completions', { ...chat, model: 'gpt-9' });
  const requestId = response.headers.get('x-svc-request-id')!;
  assert.equal(response.headers.get('x-svc-receipt-id'), `rcpt_${requestId.slice(4)}`);
});

test('the openai SDK surfaces the envelope as an APIError with code and status', async () => {
  const client = new OpenAI({ baseURL: harness.baseURL, apiKey: harness.key, maxRetries: 0 });
  await assert.rejects(client.chat.completions.create({ model: 'gpt-9', messages: [{ role: 'user', content: 'x' }] }), (error: any) => {
    assert.equal(error.status, 400);
    assert.equal(error.code, 'unsupported_model');
    assert.equal(error.type, 'invalid_request_error');
    return true;
  });
});
