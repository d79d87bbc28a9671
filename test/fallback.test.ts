import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startHarness, sseData, type Harness } from './helpers/gateway-harness.ts';

let harness: Harness;
let client: OpenAI;

before(async () => {
  harness = await startHarness({ timeoutMs: 300 });
  client = new OpenAI({ baseURL: harness.baseURL, apiKey: harness.key, maxRetries: 0 });
});
after(() => harness.close());
beforeEach(() => harness.fake.reset());

const ask = (model: string, extra: Record<string, unknown> = {}) =>
  harness.post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hello' }], ...extra });

async function receiptOf(response: Response) {
  const receipt = await harness.get(`/v1/receipts/${response.headers.get('x-svc-receipt-id')}`);
  assert.equal(receipt.status, 200);
  return receipt.json() as Promise<any>;
}

test('a failing first candidate falls back to the next; the receipt lists both attempts', async () => {
  harness.fake.script('alpha', { status: 500 });
  harness.fake.script('beta', { text: 'from beta' });
  const { data, response } = await client.chat.completions.create({ model: 'svc/fast', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
  assert.equal(data.model, 'up/beta');
  assert.equal(data.choices[0]!.message.content, 'from beta');
  assert.equal(response.headers.get('x-svc-model'), 'up/beta');
  const receipt = await receiptOf(response);
  assert.equal(receipt.status, 'succeeded');
  assert.deepEqual(
    receipt.attempts.map((attempt: any) => [attempt.model, attempt.outcome, attempt.error_code]),
    [
      ['up/alpha', 'failed', 'provider_unavailable'],
      ['up/beta', 'succeeded', null],
    ],
  );
});

test('routing.fallback false keeps the request on the first candidate', async () => {
  harness.fake.script('alpha', { status: 503 });
  const response = await ask('svc/fast', { routing: { fallback: false } });
  assert.equal(response.status, 503);
  const body = await response.json();
  assert.equal(body.error.code, 'provider_unavailable');
  assert.equal(harness.fake.requests.length, 1);
});

test('routing.allowed_models narrows an alias', async () => {
  const response = await ask('svc/fast', { routing: { allowed_models: ['up/beta'] } });
  assert.equal(response.status, 200);
  assert.equal((await response.json()).model, 'up/beta');
  assert.deepEqual(
    harness.fake.requests.map((request) => (request.body as any).model),
    ['beta'],
  );
});

test('routing.allowed_models that leaves nothing, or names unknown models, is unsupported_parameter', async () => {
  for (const allowed of [['anth/claude'], ['nope/model']]) {
    const response = await ask('svc/fast', { routing: { allowed_models: allowed } });
    assert.equal(response.status, 400);
    assert.equal((await response.json()).error.code, 'unsupported_parameter');
  }
  assert.equal(harness.fake.requests.length, 0);
});

test('all candidates rate-limited: provider_rate_limited 429, retryable, after trying each', async () => {
  harness.fake.script('alpha', { status: 429, headers: { 'retry-after': '7' } });
  harness.fake.script('beta', { status: 429, headers: { 'retry-after': '3' } });
  const response = await ask('svc/fast');
  assert.equal(response.status, 429);
  assert.equal(response.headers.get('retry-after'), '3', 'the soonest any candidate takes requests again');
  const body = await response.json();
  assert.equal(body.error.code, 'provider_rate_limited');
  assert.equal(body.error.retryable, true);
  assert.match(body.error.message, /up\/alpha.*up\/beta/);
  assert.equal(harness.fake.requests.length, 2);
});

test('all candidates rate-limited without saying for how long: a short retry-after all the same', async () => {
  harness.fake.script('alpha', { status: 429 });
  harness.fake.script('beta', { status: 429 });
  const response = await ask('svc/fast');
  assert.equal(response.status, 429);
  assert.equal(response.headers.get('retry-after'), '2');
});

test('all candidates timed out: provider_timeout 504', async () => {
  harness.fake.script('alpha', { hang: true });
  harness.fake.script('beta', { hang: true });
  const response = await ask('svc/fast');
  assert.equal(response.status, 504);
  const body = await response.json();
  assert.equal(body.error.code, 'provider_timeout');
  assert.equal(body.error.retryable, true);
});

test('every candidate rejected the request: provider_bad_request 400 with the provider message', async () => {
  harness.fake.script('alpha', { status: 400, errorBody: { error: { message: 'messages too long for alpha' } } });
  harness.fake.script('beta', { status: 400, errorBody: { error: { message: 'bad thing in beta' } } });
  const response = await ask('svc/fast');
  assert.equal(response.status, 400);
  const body = await response.json();
  assert.equal(body.error.code, 'provider_bad_request');
  assert.equal(body.error.retryable, false);
  assert.match(body.error.message, /messages too long for alpha/);
});

test('provider credentials failing everywhere: provider_auth_error 502, and the secret never shows', async () => {
  harness.fake.script('alpha', { status: 401, errorBody: { error: { message: 'Incorrect API key provided: sk-upstream-openai-SECRET' } } });
  harness.fake.script('beta', { status: 401 });
  const response = await ask('svc/fast');
  assert.equal(response.status, 502);
  const text = await response.text();
  assert.equal(JSON.parse(text).error.code, 'provider_auth_error');
  assert.ok(!text.includes('SECRET'), text);
});

test('malformed answers everywhere: provider_invalid_response 502', async () => {
  harness.fake.script('alpha', { malformed: true });
  harness.fake.script('beta', { malformed: true });
  const response = await ask('svc/fast');
  assert.equal(response.status, 502);
  assert.equal((await response.json()).error.code, 'provider_invalid_response');
});

test('mixed failures: provider_unavailable 503 listing each outcome', async () => {
  harness.fake.script('alpha', { status: 429 });
  harness.fake.script('beta', { status: 500 });
  const response = await ask('svc/fast');
  assert.equal(response.status, 503);
  const body = await response.json();
  assert.equal(body.error.code, 'provider_unavailable');
  assert.match(body.error.message, /up\/alpha: provider_rate_limited.*up\/beta: provider_unavailable/);
  assert.match(body.error.request_id, /^req_/);
});

test('a capability filter skips candidates without a call and explains each', async () => {
  const image = { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } };
  // up/beta has no vision: svc/fast with an image goes to up/alpha only.
  harness.fake.script('alpha', { status: 500 });
  const response = await harness.post('/v1/chat/completions', { model: 'svc/fast', messages: [{ role: 'user', content: [image] }] });
  assert.equal(response.status, 503);
  assert.deepEqual(
    harness.fake.requests.map((request) => (request.body as any).model),
    ['alpha'],
  );
  const receipt = await receiptOf(response);
  assert.deepEqual(
    receipt.attempts.map((attempt: any) => [attempt.model, attempt.outcome]),
    [
      ['up/beta', 'skipped'],
      ['up/alpha', 'failed'],
    ],
  );

  const tooBig = await harness.post('/v1/chat/completions', {
    model: 'up/tiny',
    messages: [{ role: 'user', content: 'word '.repeat(2000) }],
    tools: [{ type: 'function', function: { name: 'f' } }],
  });
  assert.equal(tooBig.status, 400);
  const error = (await tooBig.json()).error;
  assert.equal(error.code, 'unsupported_parameter');
  assert.match(error.message, /up\/tiny: does not support tools/);
});

test('fallback happens before the first chunk of a stream', async () => {
  harness.fake.script('alpha', { status: 500 });
  harness.fake.script('beta', { text: 'streamed by beta' });
  const response = await ask('svc/fast', { stream: true });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('x-svc-model'), 'up/beta');
  const chunks = sseData(await response.text())
    .slice(0, -1)
    .map((data) => JSON.parse(data));
  assert.equal(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''), 'streamed by beta');
});

test('a stream whose every candidate fails before the first chunk is a plain JSON error', async () => {
  harness.fake.script('alpha', { status: 429 });
  harness.fake.script('beta', { status: 429 });
  const response = await ask('svc/fast', { stream: true });
  assert.equal(response.status, 429);
  assert.match(response.headers.get('content-type')!, /application\/json/);
  assert.equal((await response.json()).error.code, 'provider_rate_limited');
});

test('a provider failing after tokens started ends the stream with an error event and no [DONE]', async () => {
  harness.fake.script('alpha', { text: 'This answer will be cut short by the provider', chunkSize: 4, dieAfterChunks: 3 });
  const response = await ask('svc/fast', { stream: true });
  assert.equal(response.status, 200);
  const events = sseData(await response.text());
  assert.ok(!events.includes('[DONE]'));
  const last = JSON.parse(events.at(-1)!);
  assert.equal(last.error.code, 'provider_unavailable');
  assert.equal(last.error.retryable, true);
  assert.equal(last.error.type, 'api_error');
  assert.match(last.error.request_id, /^req_/);
  assert.equal(harness.fake.requests.length, 1, 'no fallback after the first chunk');
  const receipt = await receiptOf(response);
  assert.equal(receipt.status, 'failed');
  assert.equal(receipt.error_code, 'provider_unavailable');
  assert.ok(BigInt(receipt.cost.replace('.', '')) > 0n, 'what was generated is paid, estimated');
  assert.equal(receipt.usage_estimated, true);
});

test('the openai SDK raises on a mid-stream error event', async () => {
  harness.fake.script('alpha', { text: 'abcdefghijklmnopqrstuvwxyz', chunkSize: 2, errorAfterChunks: 2 });
  const stream = await client.chat.completions.create({ model: 'up/alpha', messages: [{ role: 'user', content: 'x' }], stream: true });
  await assert.rejects(async () => {
    for await (const _chunk of stream);
  });
});
