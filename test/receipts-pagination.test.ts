import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { privateKeyToAccount } from 'viem/accounts';
import { issueApiKey } from '../src/auth/issue-api-key.ts';
import { NANO_PER_USD } from '../src/lib/money.ts';
import { DEFAULT_ACCOUNT_ID } from '../src/storage/store.ts';
import { consoleClient, json } from './helpers/console-client.ts';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';
import type { GatewayProcess } from './helpers/gateway-process.ts';
import { postgresUnreachable, reportPostgresUnreachable } from './helpers/postgres-test-connection.ts';
import { startGatewayFleet, type GatewayFleet } from './helpers/gateway-fleet.ts';

const owner = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');

interface Listed {
  id: string;
  created_at: string;
}

/** `count` chat requests at once (every fifth for a model that does not exist: a failed receipt); the receipt ids. */
async function burst(count: number, post: (index: number, body: unknown) => Promise<Response>): Promise<string[]> {
  const responses = await Promise.all(
    Array.from({ length: count }, (_, index) =>
      post(index, { model: index % 5 ? 'up/alpha' : 'up/missing', messages: [{ role: 'user', content: `request ${index}` }] }),
    ),
  );
  return Promise.all(
    responses.map(async (response) => {
      await response.arrayBuffer();
      const id = response.headers.get('x-svc-receipt-id');
      assert.ok(id, `a receipt id (status ${response.status})`);
      return id;
    }),
  );
}

/**
 * Pages newest first as a client would, passing the last created_at as `before` and nothing
 * else, asserting each page is full and has_more says whether another follows.
 */
async function pageWithBefore(get: (path: string) => Promise<Response>, limit: number, total: number): Promise<Listed[]> {
  assert.equal(total % limit, 0, 'a last page exactly full: has_more must still be false on it');
  const listed: Listed[] = [];
  let before: string | undefined;
  for (let pages = 1; pages <= total / limit; pages++) {
    const response = await get(`/v1/receipts?limit=${limit}${before === undefined ? '' : `&before=${encodeURIComponent(before)}`}`);
    assert.equal(response.status, 200);
    const page = (await response.json()) as { data: Listed[]; has_more: boolean };
    assert.equal(page.data.length, limit, `page ${pages} is full`);
    assert.equal(page.has_more, pages < total / limit, `has_more on page ${pages}`);
    listed.push(...page.data);
    before = page.data.at(-1)!.created_at;
  }
  return listed;
}

/** Every receipt once, newest first with strictly decreasing nine-digit created_at, and the burst did share milliseconds. */
function assertEachOnce(listed: Listed[], written: string[]): void {
  assert.deepEqual(listed.map((receipt) => receipt.id).sort(), [...written].sort(), 'each receipt listed exactly once');
  for (const [index, receipt] of listed.entries()) {
    assert.match(receipt.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{9}Z$/);
    if (index > 0) assert.ok(receipt.created_at < listed[index - 1]!.created_at, `${receipt.created_at} older than the one before`);
  }
  const milliseconds = new Set(listed.map((receipt) => receipt.created_at.slice(0, 23)));
  assert.ok(milliseconds.size < written.length, `the burst shared milliseconds (${written.length} receipts in ${milliseconds.size})`);
}

describe('receipts of one millisecond, paged with before alone (SQLite, one process)', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness();
  });
  after(() => harness.close());

  test('200 concurrent requests in one millisecond: every receipt listed once by /v1/receipts and by the console, has_more exact', async (t) => {
    const earlier = await burst(8, (_index, body) => harness.post('/v1/chat/completions', body));
    await sleep(5);
    // One process rarely starts two requests in one millisecond on its own: hold the clock still while they start.
    const startedAt = Date.now();
    t.mock.method(Date, 'now', () => startedAt);
    const written = await burst(200, (_index, body) => harness.post('/v1/chat/completions', body));
    t.mock.restoreAll();
    const listed = await pageWithBefore((path) => harness.get(path), 8, 208);
    assertEachOnce(listed, [...earlier, ...written]);
    assert.ok(
      listed.slice(0, 200).every((receipt) => Date.parse(receipt.created_at) === startedAt),
      'the 200 share one millisecond',
    );

    // An instant with fewer digits still works: the burst's millisecond is before every receipt of it.
    const older = (await (await harness.get(`/v1/receipts?limit=100&before=${new Date(startedAt).toISOString()}`)).json()) as { data: Listed[] };
    assert.deepEqual(
      older.data.map((receipt) => receipt.id),
      listed.slice(200).map((receipt) => receipt.id),
    );

    const client = consoleClient(harness.gateway.url);
    const session = await client.signIn(owner);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { data: Listed[]; next_cursor: string | null } = await json(
        await client.call('GET', `/receipts?limit=9${cursor ? `&cursor=${cursor}` : ''}`, { session }),
      );
      seen.push(...page.data.map((receipt) => receipt.id));
      cursor = page.next_cursor;
    } while (cursor);
    assert.deepEqual(
      seen,
      listed.map((receipt) => receipt.id),
      'the console lists them once each, in the same order',
    );
  });

  test('before beyond nine fractional digits, or not an instant, is invalid_request', async () => {
    for (const before of ['2026-11-24T03:58:21.1234567891Z', 'yesterday', '1795492701123']) {
      const response = await harness.get(`/v1/receipts?before=${encodeURIComponent(before)}`);
      assert.equal(response.status, 400, before);
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'invalid_request');
    }
  });
});

const missing = await postgresUnreachable();

if (missing !== null) {
  reportPostgresUnreachable('receipts pagination across processes', missing);
} else {
  describe('receipts of one millisecond, paged with before alone (three processes on PostgreSQL)', () => {
    let fleet: GatewayFleet;
    let gateways: GatewayProcess[] = [];
    let key: string;

    before(async () => {
      fleet = await startGatewayFleet({
        name: 'pages',
        prepare: async (ready) => {
          await ready.addFunds(DEFAULT_ACCOUNT_ID, 100 * NANO_PER_USD, 'test');
          ({ key } = await issueApiKey(ready, { name: 'pages', rateLimitPerMinute: 100_000 }));
        },
      });
      ({ gateways } = fleet);
    });

    after(() => fleet?.close());

    test('300 requests at once over three processes: every receipt listed once, has_more exact, from any process', async () => {
      const written = await burst(300, (index, body) =>
        fetch(`${gateways[index % 3]!.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
      );
      let turn = 0;
      const listed = await pageWithBefore(
        (path) => fetch(`${gateways[turn++ % 3]!.url}${path}`, { headers: { authorization: `Bearer ${key}` } }),
        25,
        300,
      );
      assertEachOnce(listed, written);
    });
  });
}
