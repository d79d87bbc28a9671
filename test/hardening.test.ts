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
