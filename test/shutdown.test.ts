import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSqliteStore } from '../src/storage/sqlite/sqlite-store.ts';
import { DEFAULT_ACCOUNT_ID } from '../src/storage/store.ts';
import { startHarness } from './helpers/gateway-harness.ts';

test('shutdown lets a short request finish and cuts a long stream, settling both receipts', async () => {
  const harness = await startHarness({ drainMs: 300 });
  const path = harness.gateway.deps.config.database.path;
  harness.fake.script('alpha', { text: 'quick', headerDelayMs: 100 });
  harness.fake.script('beta', { text: 'word '.repeat(500), chunkSize: 5, chunkDelayMs: 20 });
  const quick = harness.post('/v1/chat/completions', { model: 'up/alpha', messages: [{ role: 'user', content: 'q' }] });
  const long = await harness.post('/v1/chat/completions', { model: 'up/beta', messages: [{ role: 'user', content: 'l' }], stream: true });
  const longBody = long.text().catch(() => 'cut');
  await harness.gateway.close();
  assert.equal((await quick).status, 200, 'a request in flight finishes during the drain');
  await longBody;
  const store = createSqliteStore(path);
  await store.migrate();
  const { data } = await store.listReceipts(DEFAULT_ACCOUNT_ID, { limit: 10 });
  await store.close();
  await harness.fake.close();
  const byModel = new Map(data.map((receipt) => [receipt.answeringModel, receipt]));
  assert.equal(byModel.get('up/alpha')?.status, 'succeeded');
  assert.equal(byModel.get('up/beta')?.status, 'cancelled');
  assert.ok(byModel.get('up/beta')!.costNano > 0);
});

test('a request whose client leaves before its body is read settles as cancelled at no cost, and shutdown does not wait for it', async () => {
  const harness = await startHarness({ drainMs: 10_000 });
  const { deps } = harness.gateway;
  // Hold the request in its onRequest hook, after it was metered, until the client has gone.
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  const take = deps.rateLimiter.take.bind(deps.rateLimiter);
  deps.rateLimiter.take = async (...args) => {
    await gate;
    return take(...args);
  };
  const body = JSON.stringify({ model: 'up/alpha', messages: [{ role: 'user', content: 'gone' }] });
  const { port } = new URL(harness.gateway.url);
  const socket = connect(Number(port), '127.0.0.1');
  socket.on('error', () => {});
  socket.write(
    `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${harness.key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  while (deps.meter.inFlight === 0) await sleep(5);
  socket.destroy();
  await sleep(50);
  release();
  for (let tries = 0; deps.meter.inFlight > 0 && tries < 100; tries++) await sleep(10);
  assert.equal(deps.meter.inFlight, 0, 'the abandoned request settled');
  const started = Date.now();
  await harness.gateway.close();
  assert.ok(Date.now() - started < 2_000, 'shutdown did not wait for the drain time');

  const store = createSqliteStore(harness.gateway.deps.config.database.path);
  await store.migrate();
  const { data } = await store.listReceipts(DEFAULT_ACCOUNT_ID, { limit: 10 });
  const holds = await store.listHolds(DEFAULT_ACCOUNT_ID);
  await store.close();
  await harness.fake.close();
  assert.deepEqual(
    data.map((receipt) => [receipt.status, receipt.errorCode, receipt.costNano, receipt.holdNano]),
    [['cancelled', 'request_cancelled', 0, 0]],
  );
  assert.deepEqual(holds, []);
  assert.equal(harness.fake.requests.length, 0, 'no provider was called');
});
