import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Store } from '../src/storage/store.ts';
import { readUntil, startHarness, type Harness } from './helpers/gateway-harness.ts';

let harness: Harness;

before(async () => {
  harness = await startHarness({ timeoutMs: 5_000 });
});
after(() => harness.close());
beforeEach(() => harness.fake.reset());

async function receiptWhenWritten(id: string) {
  for (let tries = 0; tries < 100; tries++) {
    const response = await harness.get(`/v1/receipts/${id}`);
    if (response.status === 200) return response.json() as Promise<any>;
    await sleep(20);
  }
  throw new Error(`receipt ${id} never appeared`);
}

test('closing a stream stops the provider and the receipt records cancelled with the cost so far', async () => {
  harness.fake.script('alpha', { text: 'word '.repeat(200), chunkSize: 5, chunkDelayMs: 20 });
  const response = await harness.post('/v1/chat/completions', {
    model: 'up/alpha',
    messages: [{ role: 'user', content: 'long story' }],
    stream: true,
  });
  const receiptId = response.headers.get('x-svc-receipt-id')!;
  const reader = response.body!.getReader();
  await readUntil(reader, (text) => text.split('data: ').length >= 6);
  await reader.cancel();
  await harness.fake.waitForAborted(1, 3_000);
  const receipt = await receiptWhenWritten(receiptId);
  assert.equal(receipt.status, 'cancelled');
  assert.equal(receipt.error_code, 'request_cancelled');
  assert.equal(receipt.usage_estimated, true);
  assert.ok(receipt.usage.completion_tokens > 0, 'what was forwarded is counted');
  assert.ok(receipt.usage.completion_tokens < 200, 'not the whole answer');
  assert.ok(receipt.usage.prompt_tokens > 0);
  assert.notEqual(receipt.cost, '0.000000000');
  assert.equal(receipt.attempts.at(-1).outcome, 'cancelled');
});

test('closing a non-streaming request stops the provider too', async () => {
  harness.fake.script('alpha', { hang: true });
  const controller = new AbortController();
  const pending = fetch(`${harness.gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${harness.key}` },
    body: JSON.stringify({ model: 'up/alpha', messages: [{ role: 'user', content: 'x' }] }),
    signal: controller.signal,
  }).catch((error) => error);
  while (harness.fake.requests.length === 0) await sleep(5);
  controller.abort();
  await pending;
  await harness.fake.waitForAborted(1, 3_000);
  const find = async () => ((await (await harness.get('/v1/receipts?limit=5')).json()).data as any[]).find((entry) => !entry.stream);
  let receipt = await find();
  for (let tries = 0; receipt?.status !== 'cancelled' && tries < 50; tries++) {
    await sleep(20);
    receipt = await find();
  }
  assert.equal(receipt.status, 'cancelled');
  assert.equal(receipt.error_code, 'request_cancelled');
  assert.ok(receipt.usage.prompt_tokens > 0, 'the prompt the provider read is billed, estimated');
});

test('a client that leaves while its hold is placed costs nothing: the provider is never called', async () => {
  // The store the requests' meter places holds with.
  const store = (harness.gateway.deps.meter as unknown as { store: Store }).store;
  const placeHold = store.placeHold;
  let entered!: () => void;
  const holding = new Promise<void>((resolve) => (entered = resolve));
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  store.placeHold = async (...args) => {
    entered();
    await gate;
    return placeHold.apply(store, args);
  };
  const listed = async () => (await (await harness.get('/v1/receipts?limit=5')).json()).data as any[];
  const earlier = new Set((await listed()).map((entry) => entry.id));
  try {
    const controller = new AbortController();
    const pending = fetch(`${harness.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${harness.key}` },
      body: JSON.stringify({ model: 'up/alpha', messages: [{ role: 'user', content: 'gone before the call' }] }),
      signal: controller.signal,
    }).catch((error) => error);
    await holding;
    controller.abort();
    await pending;
    // Give the gateway's socket time to see the client close before the hold comes back.
    await sleep(100);
    release();
    let receipt: any;
    for (let tries = 0; tries < 100 && !receipt; tries++) {
      receipt = (await listed()).find((entry) => !earlier.has(entry.id));
      if (!receipt) await sleep(20);
    }
    assert.ok(receipt, 'a receipt is written');
    assert.equal(receipt.status, 'cancelled');
    assert.equal(harness.fake.requests.length, 0, 'the provider was never called');
    assert.deepEqual([receipt.error_code, receipt.cost], ['request_cancelled', '0.000000000']);
  } finally {
    store.placeHold = placeHold;
  }
});

test('a client that half-closes once its request is out is a client gone: the call stops, no answer, the receipt says cancelled', async () => {
  harness.fake.script('alpha', { hang: true });
  const listed = async () => (await (await harness.get('/v1/receipts?limit=5')).json()).data as any[];
  const earlier = new Set((await listed()).map((entry) => entry.id));
  const url = new URL(harness.gateway.url);
  const body = JSON.stringify({ model: 'up/alpha', messages: [{ role: 'user', content: 'then I stop writing' }] });
  const socket = connect({ host: url.hostname, port: Number(url.port) });
  const answer: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => answer.push(chunk));
  const closed = once(socket, 'close');
  socket.write(
    `POST /v1/chat/completions HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${harness.key}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  while (harness.fake.requests.length === 0) await sleep(5);
  // Its writing side shut, its reading side still open: it could still read an answer.
  socket.end();
  await closed;
  await harness.fake.waitForAborted(1, 3_000);
  assert.equal(Buffer.concat(answer).length, 0, 'the connection ends without an answer');
  let receipt: any;
  for (let tries = 0; tries < 100 && receipt?.status !== 'cancelled'; tries++) {
    receipt = (await listed()).find((entry) => !earlier.has(entry.id));
    if (receipt?.status !== 'cancelled') await sleep(20);
  }
  assert.equal(receipt?.status, 'cancelled');
  assert.equal(receipt.error_code, 'request_cancelled');
  assert.ok(receipt.usage.prompt_tokens > 0, 'the prompt the provider read is billed, estimated');
});
