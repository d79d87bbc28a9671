import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ReceiptRecord } from '../src/storage/records.ts';
import { DEFAULT_ACCOUNT_ID, type Store } from '../src/storage/store.ts';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';

/**
 * A client that leaves at any point before the provider call (while its key is checked, its rate
 * counted, its hold placed, its model's health read) is a request cancelled: no provider call, or
 * one that is stopped, a receipt that says cancelled, charged for what was generated, its hold
 * released. Real HTTP over a raw socket, against the fake upstream; each step is made to wait by
 * a test-only wrapper around the real function until the gateway has seen the connection close.
 */

let harness: Harness;
before(async () => {
  harness = await startHarness({ timeoutMs: 5_000 });
});
after(() => harness.close());
beforeEach(() => harness.fake.reset());

/** The store the requests' meter places holds with (the SQLite store, as the gateway wraps it). */
const meterStore = () => (harness.gateway.deps.meter as unknown as { store: Store }).store;

/** A raw HTTP/1.1 connection to the gateway, and the gateway's own end of it. */
async function openConnection(): Promise<{ client: Socket; server: Socket }> {
  const accepted = once(harness.gateway.app.server, 'connection') as Promise<[Socket]>;
  const url = new URL(harness.gateway.url);
  const client = connect({ host: url.hostname, port: Number(url.port) });
  client.on('error', () => {});
  const [[server]] = await Promise.all([accepted, once(client, 'connect')]);
  return { client, server };
}

function chatRequest(model: string, stream: boolean): string {
  const body = JSON.stringify({ model, stream, messages: [{ role: 'user', content: `leave me, ${model}` }] });
  return (
    `POST /v1/chat/completions HTTP/1.1\r\nhost: gateway\r\nauthorization: Bearer ${harness.key}\r\n` +
    `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/** Wraps `target[name]` once so that, when `when(...args)`, the client leaves and the call waits until the gateway saw it go. */
function leaveDuring<T extends object, K extends keyof T>(
  target: T,
  name: K,
  connection: { client: Socket; server: Socket },
  when: (...args: any[]) => boolean = () => true,
): { restore(): void; left(): boolean } {
  const original = target[name] as (...args: unknown[]) => unknown;
  let left = false;
  target[name] = (async (...args: unknown[]) => {
    if (!left && when(...args)) {
      left = true;
      connection.client.destroy();
      if (!connection.server.destroyed) await once(connection.server, 'close');
    }
    return original.apply(target, args);
  }) as T[K];
  return { restore: () => (target[name] = original as T[K]), left: () => left };
}

async function receiptsSince(earlier: Set<string>, count: number): Promise<ReceiptRecord[]> {
  for (let tries = 0; tries < 200; tries++) {
    const { data } = await harness.gateway.deps.store.listReceipts(DEFAULT_ACCOUNT_ID, { limit: 20 });
    const fresh = data.filter((receipt) => !earlier.has(receipt.id));
    if (fresh.length >= count && harness.gateway.deps.meter.inFlight === 0) return fresh;
    await sleep(20);
  }
  throw new Error(`fewer than ${count} new receipts, or requests still open`);
}

async function ledgerBefore() {
  const store = harness.gateway.deps.store;
  const { data } = await store.listReceipts(DEFAULT_ACCOUNT_ID, { limit: 100 });
  return { balance: await store.getBalance(DEFAULT_ACCOUNT_ID), receipts: new Set(data.map((receipt) => receipt.id)) };
}

/** The balance moved by exactly what the new receipts cost; no hold is left; funds minus charges is the balance. */
async function assertLedgerExact(balanceBefore: number, fresh: ReceiptRecord[]): Promise<void> {
  const store = harness.gateway.deps.store;
  const charged = fresh.reduce((sum, receipt) => sum + receipt.costNano, 0);
  assert.equal(balanceBefore - (await store.getBalance(DEFAULT_ACCOUNT_ID)), charged, 'the balance moved by what the receipts cost');
  assert.deepEqual(await store.listHolds(DEFAULT_ACCOUNT_ID), [], 'every hold released');
  const totals = await store.ledgerTotals(DEFAULT_ACCOUNT_ID);
  assert.equal(totals.funds - totals.charges, await store.getBalance(DEFAULT_ACCOUNT_ID));
}

const alphaCalls = () => harness.fake.requests.filter((request) => (request.body as { model?: string }).model === 'alpha');

describe('a client that leaves while its hold is placed, behind another request on its connection', () => {
  for (const stream of [false, true]) {
    test(`is cancelled before any provider call, at no cost (stream: ${stream})`, async () => {
      // The first request keeps the connection busy; the second is read at once (pipelined) and its
      // answer queued behind the first. The upstream would answer the second slowly, in full.
      harness.fake.script('beta', { hang: true });
      harness.fake.script('alpha', { text: 'never received '.repeat(40), chunkSize: 8, chunkDelayMs: 10, headerDelayMs: 50 });
      const { balance, receipts: earlier } = await ledgerBefore();
      const connection = await openConnection();
      const hold = leaveDuring(
        meterStore(),
        'placeHold',
        connection,
        (record: { requestedModel: string | null }) => record.requestedModel === 'up/alpha',
      );
      try {
        connection.client.write(chatRequest('up/beta', stream));
        while (harness.fake.requests.length === 0) await sleep(2);
        connection.client.write(chatRequest('up/alpha', stream));
        const fresh = await receiptsSince(earlier, 2);
        assert.ok(hold.left(), 'the client left while the second hold was being placed');

        const second = fresh.find((receipt) => receipt.requestedModel === 'up/alpha')!;
        assert.equal(alphaCalls().length, 0, 'the provider never got the request of a client gone');
        assert.deepEqual(
          [second.status, second.errorCode, second.costNano],
          ['cancelled', 'request_cancelled', 0],
          'cancelled, nothing generated, nothing charged',
        );
        assert.ok(second.holdNano > 0, 'its hold was placed, then released');
        const first = fresh.find((receipt) => receipt.requestedModel === 'up/beta')!;
        assert.equal(first.status, 'cancelled');
        await harness.fake.waitForAborted(1, 3_000);
        await assertLedgerExact(balance, fresh);
      } finally {
        hold.restore();
      }
    });
  }
});

describe('a client that leaves at a step before the provider call', () => {
  const deps = () => harness.gateway.deps;
  const steps: Array<{ step: string; wrap: (connection: { client: Socket; server: Socket }) => { restore(): void; left(): boolean } }> = [
    { step: 'its key is checked', wrap: (connection) => leaveDuring(deps().keys, 'authenticate', connection) },
    { step: 'its rate limit is counted', wrap: (connection) => leaveDuring(deps().rateLimiter, 'take', connection) },
    { step: 'its hold is placed', wrap: (connection) => leaveDuring(meterStore(), 'placeHold', connection) },
    { step: "its model's health is read", wrap: (connection) => leaveDuring(deps().health, 'admit', connection) },
  ];
  for (const { step, wrap } of steps) {
    test(`while ${step}: cancelled, no provider call, no charge`, async () => {
      harness.fake.script('alpha', { text: 'never received '.repeat(40), chunkSize: 8, chunkDelayMs: 10 });
      const { balance, receipts: earlier } = await ledgerBefore();
      const connection = await openConnection();
      const wrapped = wrap(connection);
      try {
        connection.client.write(chatRequest('up/alpha', true));
        const [receipt] = await receiptsSince(earlier, 1);
        assert.ok(wrapped.left());
        assert.equal(harness.fake.requests.length, 0, 'the provider was never called');
        assert.deepEqual([receipt!.status, receipt!.errorCode, receipt!.costNano], ['cancelled', 'request_cancelled', 0]);
        await assertLedgerExact(balance, [receipt!]);
      } finally {
        wrapped.restore();
      }
    });
  }
});
