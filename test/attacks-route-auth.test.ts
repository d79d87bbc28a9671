import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { privateKeyToAccount } from 'viem/accounts';
import { consoleClient, type Session } from './helpers/console-client.ts';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';
import { sendHttp, sendRawAndWait, type RawResponse } from './helpers/raw-http.ts';

/**
 * Route auth fooled by a path spelling, a prefix or the Host header (advisories of peer
 * gateways): however a path is written, an API key never opens the console, a console cookie
 * never opens /v1, and no spelling reaches a route without its check.
 */

const owner = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');

/** Every way of writing `path` that a proxy, a router or a decoder might read as it. */
function spellings(path: string): string[] {
  const [, first, ...rest] = path.split('/');
  const tail = rest.join('/');
  const last = path.split('/').at(-1)!;
  const head = path.slice(0, path.length - last.length);
  const encoded = (text: string) => `%${text.charCodeAt(0).toString(16)}${text.slice(1)}`;
  return [
    path,
    `/${path}`,
    `//${path.slice(1)}`,
    `${head}/${last}`,
    `${head}./${last}`,
    `/${first}/./${tail}`,
    `/${first}/../${first}/${tail}`,
    `/${first!.toUpperCase()}/${tail}`,
    path.toUpperCase(),
    `${path}/`,
    `${path}//`,
    `${path}/.`,
    `${path}%2f`,
    `${head}${encoded(last)}`,
    `/${encoded(first!)}/${tail}`,
    `${head}${last.replace(/./g, (letter) => `%${letter.charCodeAt(0).toString(16).toUpperCase()}`)}`,
    `${path};`,
    `${path};x=1`,
    `${path}%00`,
    `${path}%20`,
    `${path}?${'a'.repeat(10)}`,
    `${path}#x`,
    `/./${path.slice(1)}`,
    `/x/..${path}`,
    `/console/api/../..${path}`,
    `/console/api/%2e%2e/%2e%2e${path}`,
    `/v1/..${path}`,
    `/v1/%2e%2e${path}`,
    `/health/..${path}`,
    `/metrics/../${path.slice(1)}`,
    `${path.replace(/\//g, '%2f')}`,
    `${path.replace(/\//g, '\\')}`,
  ];
}

/** A request with exactly this Host line (none when empty), through a raw socket. */
async function sendWithHost(
  baseUrl: string,
  hostValue: string,
  requestLine: string,
  headers: Array<[string, string]>,
  body?: string,
): Promise<RawResponse> {
  const lines = [`${requestLine} HTTP/1.1`, ...(hostValue ? [`host: ${hostValue}`] : []), 'connection: close'];
  for (const [name, value] of headers) lines.push(`${name}: ${value}`);
  if (body !== undefined) lines.push(`content-length: ${Buffer.byteLength(body)}`);
  const bytes = Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body ?? ''}`, 'latin1');
  const [response] = await sendRawAndWait(baseUrl, bytes);
  assert.ok(response, `${requestLine}: an answer`);
  return response;
}

function isJsonData(response: RawResponse): boolean {
  return String(response.headers['content-type'] ?? '').includes('application/json');
}

describe('path spellings and Host / X-Forwarded-* headers never cross the API key and console session boundary', () => {
  let harness: Harness;
  let session: Session;
  let host: string;
  before(async () => {
    harness = await startHarness();
    host = new URL(harness.gateway.url).host;
    session = await consoleClient(harness.gateway.url).signIn(owner);
  });
  after(() => harness.close());

  const send = (method: string, path: string, headers: Array<[string, string]>, body?: string) =>
    sendHttp(harness.gateway.url, { method, path, headers: body === undefined ? headers : [['content-type', 'application/json'], ...headers], body });
  const asSession = (): Array<[string, string]> => [
    ['cookie', session.cookie],
    ['x-csrf-token', session.csrf],
    ['origin', harness.gateway.url],
  ];
  const chatBody = JSON.stringify({ model: 'up/alpha', messages: [{ role: 'user', content: 'hi' }] });

  test('/v1 routes: a console session or nothing at all never gets an answer, however the path is spelled', async () => {
    const routes: [string, string, string?][] = [
      ['GET', '/v1/models'],
      ['GET', '/v1/balance'],
      ['GET', '/v1/receipts'],
      ['POST', '/v1/chat/completions', chatBody],
      ['POST', '/v1/messages', chatBody],
      ['POST', '/v1/responses', JSON.stringify({ model: 'up/alpha', input: 'hi' })],
    ];
    for (const [method, path, body] of routes) {
      const keyed = await send(method, path, [['authorization', `Bearer ${harness.key}`]], body);
      assert.equal(keyed.status, 200, `the key itself opens ${method} ${path}: ${keyed.body.slice(0, 200)}`);
      for (const spelling of spellings(path)) {
        for (const [who, headers] of [
          ['a console session', asSession()],
          ['no credential', []],
        ] as const) {
          const response = await send(method, spelling, [...headers], body);
          assert.ok(
            response.status === 401 || response.status === 404 || response.status === 400,
            `${method} ${spelling} with ${who}: ${response.status} ${response.body.slice(0, 200)}`,
          );
          if (response.status === 401) assert.equal(JSON.parse(response.body).error.code, 'invalid_api_key');
        }
      }
    }
    assert.equal(harness.fake.requests.length, 3, 'a provider was called only for the keyed requests');
  });

  test('console API routes: an API key never gets an answer, however the path is spelled; a key is never created', async () => {
    const keysBefore = (await (await consoleClient(harness.gateway.url).call('GET', '/keys', { session })).json()) as { data: unknown[] };
    const routes: [string, string, string?][] = [
      ['GET', '/console/api/session'],
      ['GET', '/console/api/keys'],
      ['GET', '/console/api/balance'],
      ['GET', '/console/api/receipts'],
      ['GET', '/console/api/members'],
      ['POST', '/console/api/keys', JSON.stringify({ name: 'self-granted', scopes: ['inference', 'fix'] })],
      ['POST', '/console/api/balance/funds', JSON.stringify({ amount: '1000.00' })],
    ];
    for (const [method, path, body] of routes) {
      if (method === 'GET') {
        const signedIn = await send(method, path, asSession());
        assert.equal(signedIn.status, 200, `the session itself opens ${path}: ${signedIn.body.slice(0, 200)}`);
      }
      for (const spelling of spellings(path)) {
        for (const credential of [
          ['authorization', `Bearer ${harness.key}`],
          ['x-api-key', harness.key],
        ] as [string, string][]) {
          const response = await send(method, spelling, [credential, ['origin', harness.gateway.url]], body);
          const what = `${method} ${spelling} with ${credential[0]}: ${response.status} ${response.body.slice(0, 160)}`;
          if (response.status >= 200 && response.status < 300) {
            // Only the console's own page (the same HTML for every /console/* path) is ever served.
            assert.equal(method, 'GET', what);
            assert.match(String(response.headers['content-type']), /^text\/html/, what);
            assert.doesNotMatch(response.body, /svc_|"data"|balance"/, what);
          } else {
            assert.ok([400, 401, 403, 404].includes(response.status), what);
            if (isJsonData(response)) assert.notEqual(JSON.parse(response.body).error.code, undefined, what);
          }
        }
      }
    }
    const keysAfter = (await (await consoleClient(harness.gateway.url).call('GET', '/keys', { session })).json()) as { data: unknown[] };
    assert.equal(keysAfter.data.length, keysBefore.data.length, 'no key granted itself another key');
  });

  test('Host, X-Forwarded-*, Forwarded, X-Original-URL and X-Rewrite-URL change nothing', async () => {
    const forged: Array<[string, string]> = [
      ['x-forwarded-for', '127.0.0.1'],
      ['x-real-ip', '127.0.0.1'],
      ['x-forwarded-host', 'localhost'],
      ['x-forwarded-proto', 'https'],
      ['x-forwarded-prefix', '/console/api'],
      ['forwarded', 'for=127.0.0.1;host=localhost;proto=https'],
      ['x-original-url', '/health'],
      ['x-rewrite-url', '/health'],
      ['x-http-method-override', 'GET'],
    ];
    for (const hostValue of [host, 'localhost', '127.0.0.1', 'evil.example', `evil.example@${host}`, '']) {
      const response = await sendHttp(harness.gateway.url, { method: 'GET', path: '/v1/models', headers: forged });
      assert.equal(response.status, 401, `X-Forwarded-* without a key: ${response.body.slice(0, 160)}`);
      const rawHost = await sendRawHost(hostValue, 'GET /v1/models', forged);
      assert.ok([400, 401].includes(rawHost.status), `Host: ${hostValue}: ${rawHost.status}`);
      const console = await sendRawHost(hostValue, 'GET /console/api/keys', [['authorization', `Bearer ${harness.key}`], ...forged]);
      assert.ok([400, 401].includes(console.status), `console with a key and Host: ${hostValue}: ${console.status}`);
    }
  });

  test('a forged Host with a matching forged Origin is still a cross-site change; the sign-in message names the configured domain', async () => {
    for (const [hostValue, origin] of [
      ['evil.example', 'http://evil.example'],
      [host, 'http://evil.example'],
      ['evil.example', `https://${host}`],
    ] as [string, string][]) {
      const response = await sendRawHost(
        hostValue,
        'POST /console/api/keys',
        [
          ['cookie', session.cookie],
          ['x-csrf-token', session.csrf],
          ['origin', origin],
          ['x-forwarded-host', 'evil.example'],
          ['x-forwarded-proto', 'https'],
          ['content-type', 'application/json'],
        ],
        JSON.stringify({ name: 'cross-site', scopes: ['inference'] }),
      );
      assert.equal(response.status, 403, `Host ${hostValue}, Origin ${origin}: ${response.body}`);
      assert.equal(JSON.parse(response.body).error.code, 'csrf_failed');
    }
    const nonce = await sendRawHost(
      'evil.example',
      'POST /console/api/sign-in/nonce',
      [
        ['origin', harness.gateway.url],
        ['x-forwarded-host', 'evil.example'],
        ['content-type', 'application/json'],
      ],
      JSON.stringify({ address: owner.address }),
    );
    assert.equal(nonce.status, 200, nonce.body);
    const message = JSON.parse(nonce.body).message as string;
    assert.ok(message.startsWith(`${host} wants you to sign in`), `the configured domain, not the Host header: ${message.split('\n')[0]}`);
    assert.doesNotMatch(message, /evil\.example/);
  });

  const sendRawHost = (hostValue: string, requestLine: string, headers: Array<[string, string]>, body?: string) =>
    sendWithHost(harness.gateway.url, hostValue, requestLine, headers, body);
});

describe('/metrics on a gateway listening beyond loopback: the Host header never makes it local', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness({ editConfig: (text) => text.replace('host: 127.0.0.1', 'host: 0.0.0.0') });
  });
  after(() => harness.close());

  test('Host: 127.0.0.1, localhost, X-Forwarded-For: 127.0.0.1: still not served', async () => {
    const port = new URL(harness.gateway.url).port;
    for (const [hostValue, headers] of [
      ['127.0.0.1', []],
      [`127.0.0.1:${port}`, []],
      ['localhost', []],
      ['[::1]', []],
      [`127.0.0.1:${port}`, [['x-forwarded-for', '127.0.0.1']]],
      [`127.0.0.1:${port}`, [['x-real-ip', '::1']]],
    ] as [string, Array<[string, string]>][]) {
      const response = await sendWithHost(harness.gateway.url, hostValue, 'GET /metrics', headers);
      assert.equal(response.status, 404, `${hostValue} ${JSON.stringify(headers)}`);
      assert.doesNotMatch(response.body, /gateway_/);
    }
  });
});
