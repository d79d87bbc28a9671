import { test } from 'node:test';
import assert from 'node:assert/strict';
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
