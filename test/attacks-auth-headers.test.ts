import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { privateKeyToAccount } from 'viem/accounts';
import { SESSION_COOKIE } from '../src/auth/console-sessions.ts';
import { consoleClient, type Session } from './helpers/console-client.ts';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';
import { PG_TEST_URL, postgresUnreachable, reportPostgresUnreachable, urlOnSchema } from './helpers/postgres-test-connection.ts';
import { sendRawAndWait } from './helpers/raw-http.ts';

/**
 * SQL injection through the key header (an advisory of a peer gateway), and values no parser
 * expects, in every header that carries a credential: each is refused, on SQLite and on
 * PostgreSQL, and the tables are as they were.
 */

const owner = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');

/** Values of a credential header: SQL metacharacters, wildcards, a real key's prefix with a tail, 10 KB. */
function hostileValues(realKey: string): string[] {
  const prefix = realKey.slice(0, 12);
  return [
    "' OR '1'='1",
    "' OR 1=1 --",
    "svc_' OR '1'='1' --",
    'svc_"; DROP TABLE api_keys; --',
    "svc_'); DELETE FROM api_keys; --",
    "svc_' UNION SELECT key_hash, id FROM api_keys --",
    `${prefix}' OR ''='`,
    `${prefix}%`,
    `${realKey}' --`,
    `${realKey};`,
    `${realKey}%00`,
    `${realKey}\\`,
    'svc_%',
    'svc_*',
    'svc_$1$2',
    'svc_\\x00\\u0000',
    "svc_'||pg_sleep(5)||'",
    'svc_${7*7}{{7*7}}',
    `svc_${'a'.repeat(10_240)}`,
    `${"'".repeat(10_240)}`,
    `svc_${'%27'.repeat(3_400)}`,
    `${realKey}${'x'.repeat(10_240)}`,
    'svc_\xe4\xff\xfe',
  ];
}

/** The credential headers a request may carry a value in (both at once while they fit Node's 16 KiB of headers). */
function credentialLines(value: string): Array<Array<[string, string]>> {
  const lines: Array<Array<[string, string]>> = [
    [['authorization', `Bearer ${value}`]],
    [['authorization', value]],
    [['authorization', `Basic ${Buffer.from(`${value}:`, 'latin1').toString('base64')}`]],
    [['x-api-key', value]],
  ];
  if (value.length < 6_000)
    lines.push([
      ['authorization', `Bearer ${value}`],
      ['x-api-key', value],
    ]);
  return lines;
}

/** One request written byte for byte (latin-1), so no client library cleans the value first. */
async function send(
  url: string,
  method: string,
  path: string,
  headers: Array<[string, string]>,
  body = '',
): Promise<{ status: number; body: string }> {
  const host = new URL(url).host;
  const lines = [`${method} ${path} HTTP/1.1`, `host: ${host}`, 'connection: close', ...headers.map(([name, value]) => `${name}: ${value}`)];
  if (method === 'POST') lines.push('content-type: application/json', `content-length: ${Buffer.byteLength(body)}`);
  const [response] = await sendRawAndWait(url, Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`, 'latin1'));
  assert.ok(response, `${method} ${path}: an answer`);
  return response;
}

function suite(backend: string, open: () => Promise<Harness>) {
  describe(`hostile values in every credential header are refused (${backend})`, () => {
    let harness: Harness;
    let session: Session;
    before(async () => {
      harness = await open();
      session = await consoleClient(harness.gateway.url).signIn(owner);
    });
    after(() => harness?.close());

    const chat = JSON.stringify({ model: 'up/alpha', messages: [{ role: 'user', content: 'hi' }] });

    test('Authorization and x-api-key: 401 invalid_api_key on every kind of route; the tables are untouched', async () => {
      const keysBefore = (await (await consoleClient(harness.gateway.url).call('GET', '/keys', { session })).json()) as { data: unknown[] };
      for (const value of hostileValues(harness.key)) {
        for (const headers of credentialLines(value)) {
          for (const [method, path, body] of [
            ['GET', '/v1/models', ''],
            ['GET', '/v1/balance', ''],
            ['POST', '/v1/chat/completions', chat],
            ['POST', '/v1/messages', chat],
          ] as const) {
            const response = await send(harness.gateway.url, method, path, headers, body);
            const what = `${method} ${path} ${JSON.stringify(headers).slice(0, 120)}: ${response.status} ${response.body.slice(0, 160)}`;
            assert.equal(response.status, 401, what);
            assert.equal(JSON.parse(response.body).error.code, 'invalid_api_key', what);
          }
        }
      }
      assert.equal(harness.fake.requests.length, 0, 'no provider call');
      // The real key still works, and no key appeared or disappeared.
      assert.equal((await harness.get('/v1/models')).status, 200);
      const keysAfter = (await (await consoleClient(harness.gateway.url).call('GET', '/keys', { session })).json()) as { data: unknown[] };
      assert.equal(keysAfter.data.length, keysBefore.data.length);
      const receipts = (await (await harness.get('/v1/receipts?limit=100')).json()) as { data: unknown[] };
      assert.equal(receipts.data.length, 0, 'nothing was metered for a refused key');
    });

    test('the session cookie: 401 session_required on the console API; a cookie of any value is ignored by /v1', async () => {
      // `token;` is the cookie itself, well written: every other value is refused.
      const token = session.cookie.split('=')[1]!;
      for (const value of hostileValues(token).filter((value) => value !== `${token};`)) {
        for (const cookie of [`${SESSION_COOKIE}=${value}`, `${SESSION_COOKIE}="${value}"`, `a=b; ${SESSION_COOKIE}=${value}; c=d`, `${value}`]) {
          for (const path of ['/console/api/session', '/console/api/keys', '/console/api/balance']) {
            const response = await send(harness.gateway.url, 'GET', path, [['cookie', cookie]]);
            const what = `${path} cookie ${cookie.slice(0, 80)}: ${response.status} ${response.body.slice(0, 160)}`;
            assert.equal(response.status, 401, what);
            assert.equal(JSON.parse(response.body).error.code, 'session_required', what);
          }
          const v1 = await send(harness.gateway.url, 'GET', '/v1/models', [['cookie', cookie]]);
          assert.equal(v1.status, 401);
        }
      }
      assert.equal((await consoleClient(harness.gateway.url).call('GET', '/session', { session })).status, 200, 'the real session still works');
    });

    test('NUL bytes and control characters in a credential are refused before any route (400), never authenticated', async () => {
      for (const value of [`${harness.key}\0`, `\0${harness.key}`, `svc_\0' OR 1=1`, `${harness.key}\r`, `${harness.key}\x7f\x01`]) {
        for (const headers of [...credentialLines(value), [['cookie', `${SESSION_COOKIE}=${value}`]]] as Array<Array<[string, string]>>) {
          const response = await send(harness.gateway.url, 'GET', '/v1/models', headers);
          assert.ok([400, 401].includes(response.status), `${JSON.stringify(headers)}: ${response.status} ${response.body.slice(0, 120)}`);
          assert.ok(['invalid_request', 'invalid_api_key'].includes(JSON.parse(response.body).error.code));
        }
      }
    });
  });
}

suite('SQLite', () => startHarness());

const pgMissing = await postgresUnreachable();
if (pgMissing !== null) {
  reportPostgresUnreachable('hostile credential values on PostgreSQL', pgMissing);
} else {
  const schema = `gw_attack_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Pool({ connectionString: PG_TEST_URL, max: 1 });
  after(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });
  suite('PostgreSQL', async () => {
    await admin.query(`CREATE SCHEMA ${schema}`);
    // The harness's gateway opens its store from DATABASE_URL, as `gateway start` does.
    process.env.DATABASE_URL = urlOnSchema(schema);
    try {
      return await startHarness();
    } finally {
      delete process.env.DATABASE_URL;
    }
  });
}
