import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';

async function envelope(response: Response): Promise<{ code: string; request_id: string }> {
  const body = JSON.parse(await response.text());
  assert.ok(body.error, `an error envelope: ${JSON.stringify(body)}`);
  assert.equal(body.error.request_id, response.headers.get('x-svc-request-id'));
  assert.match(body.error.request_id, /^req_/);
  return body.error;
}

describe('every response is the contract envelope', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness();
  });
  after(() => harness.close());

  test('URLs the router cannot read: invalid_request with a request id, not the framework body', async () => {
    for (const path of ['/v1/receipts/%zz', '/%', `/v1/receipts/${'a'.repeat(500)}`, '/v1/fix/runs/%E0%A4%A']) {
      const response = await harness.get(path);
      assert.equal(response.status, 400, path);
      assert.equal((await envelope(response)).code, 'invalid_request', path);
    }
  });

  test('a URL the router cannot read, sent with anthropic-version: the Anthropic error body', async () => {
    for (const path of ['/v1/%zz', `/v1/receipts/${'a'.repeat(500)}`]) {
      const response = await fetch(`${harness.gateway.url}${path}`, { headers: { 'anthropic-version': '2023-06-01' } });
      assert.equal(response.status, 400, path);
      const body = await response.json();
      assert.equal(body.type, 'error', path);
      assert.equal(body.error.type, 'invalid_request_error', path);
      assert.equal(body.request_id, response.headers.get('x-svc-request-id'), path);
      assert.equal(response.headers.get('x-should-retry'), 'false', path);
    }
    const openai = await (await harness.get('/v1/%zz')).json();
    assert.equal(openai.type, undefined, 'without the header: the OpenAI body');
  });

  test('unknown methods and paths, bodies that are not JSON: not_found and invalid_request envelopes', async () => {
    const put = await fetch(`${harness.gateway.url}/v1/chat/completions`, { method: 'PUT', headers: { authorization: `Bearer ${harness.key}` } });
    assert.deepEqual([put.status, (await envelope(put)).code], [404, 'not_found']);
    const xml = await fetch(`${harness.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${harness.key}`, 'content-type': 'application/xml' },
      body: '<a/>',
    });
    assert.deepEqual([xml.status, (await envelope(xml)).code], [400, 'invalid_request']);
  });
});

describe('ambiguous credentials are refused', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness();
  });
  after(() => harness.close());

  test('two Authorization headers: invalid_api_key, even when the first is valid', async () => {
    const response = await fetch(`${harness.gateway.url}/v1/models`, {
      headers: [
        ['authorization', `Bearer ${harness.key}`],
        ['authorization', 'Bearer svc_added_by_a_proxy'],
      ],
    });
    assert.deepEqual([response.status, (await envelope(response)).code], [401, 'invalid_api_key']);
  });

  test('Authorization and x-api-key naming different keys: invalid_api_key; the same key twice is fine', async () => {
    const other = await harness.createKey();
    const mixed = await fetch(`${harness.gateway.url}/v1/models`, { headers: { authorization: `Bearer ${harness.key}`, 'x-api-key': other.key } });
    assert.deepEqual([mixed.status, (await envelope(mixed)).code], [401, 'invalid_api_key']);
    const same = await fetch(`${harness.gateway.url}/v1/models`, { headers: { authorization: `Bearer ${harness.key}`, 'x-api-key': harness.key } });
    assert.equal(same.status, 200);
  });
});

describe('deep nesting is refused at parse time, never crashed on', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness();
  });
  after(() => harness.close());

  /** `{"a": {"a": ... 5000 levels ... }}` as text: no recursion needed to build it. */
  const deep = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

  test('in messages, tool schemas, metadata and Responses input: invalid_request naming the field, a receipt at cost 0', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['/v1/chat/completions', `{"model":"up/alpha","messages":[{"role":"user","content":${deep(5000)}}]}`, /^messages\[0\]\.content/],
      [
        '/v1/chat/completions',
        `{"model":"up/alpha","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${deep(3000)}}}]}`,
        /^tools\[0\]\.function\.parameters/,
      ],
      ['/v1/responses', `{"model":"up/alpha","input":"hi","metadata":${deep(5000)}}`, /^metadata/],
      ['/v1/responses', `{"model":"up/alpha","input":[{"role":"user","content":${deep(5000)}}]}`, /^input\[0\]\.content/],
      ['/v1/messages', `{"model":"up/alpha","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"metadata":${deep(5000)}}`, /^metadata/],
    ];
    for (const [path, body, field] of cases) {
      const response = await harness.post(path, body);
      const text = await response.text();
      assert.equal(response.status, 400, `${path}: ${text.slice(0, 200)}`);
      const error = JSON.parse(text).error;
      assert.equal(error.code, 'invalid_request');
      assert.match(error.message, field);
      assert.match(error.message, /deeper than 64 levels/);
      const receipt = JSON.parse(await (await harness.get(`/v1/receipts/${response.headers.get('x-svc-receipt-id')}`)).text());
      assert.deepEqual([receipt.status, receipt.cost], ['failed', '0.000000000']);
    }
    assert.equal(harness.fake.requests.length, 0, 'no provider was called');
  });

  test('a real tool schema, a few levels deep, is fine', async () => {
    const schema = { type: 'object', properties: { a: { type: 'object', properties: { b: { type: 'array', items: { type: 'string' } } } } } };
    const response = await harness.post('/v1/chat/completions', {
      model: 'up/alpha',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'function', function: { name: 'f', parameters: schema } }],
    });
    assert.equal(response.status, 200);
  });
});

describe('the body limit', () => {
  test('a body above server.body_limit_bytes (8 MiB by default): invalid_request with status 413, naming the limit, a receipt at cost 0', async () => {
    const harness = await startHarness();
    try {
      const content = 'x'.repeat(8 * 1024 * 1024);
      const response = await harness.post('/v1/chat/completions', { model: 'up/alpha', messages: [{ role: 'user', content }] });
      assert.equal(response.status, 413);
      const error = await envelope(response);
      assert.equal(error.code, 'invalid_request');
      assert.match((error as unknown as { message: string }).message, /8388608 bytes; server\.body_limit_bytes/);
      const receipt = JSON.parse(await (await harness.get(`/v1/receipts/${response.headers.get('x-svc-receipt-id')}`)).text());
      assert.deepEqual([receipt.status, receipt.cost], ['failed', '0.000000000']);
      assert.equal(harness.fake.requests.length, 0);
    } finally {
      await harness.close();
    }
  });
});
