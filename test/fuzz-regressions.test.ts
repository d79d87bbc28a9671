import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { privateKeyToAccount } from 'viem/accounts';
import { consoleClient } from './helpers/console-client.ts';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';
import { sendHttp, sendRawBytes, type RawResponse } from './helpers/raw-http.ts';

/** Defects the endpoint fuzzer (test/fuzz-endpoints.test.ts) found, each pinned by the input that showed it. */

function envelope(response: RawResponse): { code: string; message: string; request_id: string } {
  const body = JSON.parse(response.body);
  assert.ok(body.error, `an error envelope: ${response.body}`);
  assert.match(body.error.request_id, /^req_/);
  assert.equal(body.error.request_id, response.headers['x-svc-request-id']);
  return body.error;
}

describe('requests Node cannot parse get the envelope, not the framework body', () => {
  let harness: Harness;
  let host: string;
  before(async () => {
    harness = await startHarness();
    host = new URL(harness.gateway.url).host;
  });
  after(() => harness.close());

  const send = async (request: string) => {
    const responses = await sendRawBytes(harness.gateway.url, Buffer.from(request, 'latin1'));
    assert.ok(responses.length > 0, 'an answer');
    return responses;
  };

  test('a control byte in the request line, a header without a colon, two framings: invalid_request, 400, and the connection closes', async () => {
    const requests = [
      `GET /v1/models\u0001 HTTP/1.1\r\nhost: ${host}\r\n\r\n`,
      `GET /v1/\xff HTTP/1.1\r\nhost: ${host}\r\n\r\n`,
      `GET /v1/models HTTP/1.1\r\nhost: ${host}\r\nno-colon\r\n\r\n`,
      `POST /v1/chat/completions HTTP/1.1\r\nhost: ${host}\r\ntransfer-encoding: chunked\r\ncontent-length: 5\r\n\r\n0\r\n\r\n`,
      `POST /v1/chat/completions HTTP/1.1\r\nhost: ${host}\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
    ];
    for (const request of requests) {
      const [response] = await send(request);
      assert.equal(response!.status, 400, JSON.stringify(request));
      assert.equal(response!.headers.connection, 'close');
      assert.equal(envelope(response!).code, 'invalid_request');
    }
  });

  test('headers above Node’s limit: invalid_request with status 431, naming the limit', async () => {
    const [response] = await send(`GET /v1/models HTTP/1.1\r\nhost: ${host}\r\nx-padding: ${'p'.repeat(20_000)}\r\n\r\n`);
    assert.equal(response!.status, 431);
    const error = envelope(response!);
    assert.equal(error.code, 'invalid_request');
    assert.match(error.message, /16384 bytes/);
  });

  test('a broken request behind a good one on the same connection: the envelope for it, never a framework body', async () => {
    const responses = await send(`GET /v1/no-such-route HTTP/1.1\r\nhost: ${host}\r\n\r\nGARBAGE \u0001\r\n\r\n`);
    // The good one is answered when it finished before the broken one was read; either way the last answer is the envelope.
    for (const response of responses) assert.ok(['not_found', 'invalid_request'].includes(envelope(response).code));
    assert.deepEqual([responses.at(-1)!.status, envelope(responses.at(-1)!).code], [400, 'invalid_request']);
  });
});

describe('a second Authorization or x-api-key line is refused, not dropped', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness();
  });
  after(() => harness.close());

  test('two lines naming two keys, or the same key twice: invalid_api_key on every route, nothing billed', async () => {
    const other = (await harness.createKey()).key;
    const twice: Array<Array<[string, string]>> = [
      [
        ['authorization', `Bearer ${harness.key}`],
        ['authorization', `Bearer ${other}`],
      ],
      [
        ['authorization', `Bearer ${harness.key}`],
        ['authorization', `Bearer ${harness.key}`],
      ],
      [
        ['x-api-key', harness.key],
        ['x-api-key', other],
      ],
    ];
    const body = JSON.stringify({ model: 'up/alpha', messages: [{ role: 'user', content: 'hi' }] });
    for (const headers of twice) {
      for (const [method, path] of [
        ['GET', '/v1/models'],
        ['POST', '/v1/chat/completions'],
      ]) {
        const response = await sendHttp(harness.gateway.url, { method: method!, path: path!, headers, body: method === 'POST' ? body : undefined });
        assert.equal(response.status, 401, `${path} with ${headers.map(([name]) => name).join(' + ')}`);
        const error = envelope(response);
        assert.equal(error.code, 'invalid_api_key');
        assert.match(error.message, /more than one credential/);
      }
    }
    assert.equal(harness.fake.requests.length, 0);
  });
});

describe('funds that would carry the balance past the exact range are refused', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness();
  });
  after(() => harness.close());

  test('POST /console/api/balance/funds: invalid_request naming amount, the balance unchanged and still readable', async () => {
    const owner = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
    const client = consoleClient(harness.gateway.url);
    const session = await client.signIn(owner);
    const before = await (await harness.get('/v1/balance')).json();
    // $1000 are there already: the largest amount the field accepts would pass 2^53 nano-USD.
    const refused = await client.call('POST', '/balance/funds', { session, body: { amount: '9007199.254740991' } });
    assert.equal(refused.status, 400);
    const error = (await refused.json()).error;
    assert.deepEqual([error.code, error.param], ['invalid_request', 'amount']);
    const balance = await harness.get('/v1/balance');
    assert.equal(balance.status, 200);
    assert.equal((await balance.json()).balance, before.balance);
    const added = await client.call('POST', '/balance/funds', { session, body: { amount: '5' } });
    assert.equal(added.status, 200);
  });
});
