import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextCheck } from 'node:timers/promises';
import { test } from 'node:test';
import { createSqliteStore } from '../storage/sqlite/sqlite-store.ts';
import { sampleKey, sampleReceipt } from '../testing/store-contract.ts';
import { observeReceipts } from './observe-receipts.ts';

test("a receipt's metrics and log line come after what its writer does next (the end of the answer), never before the write", async () => {
  const directory = await mkdtemp(join(tmpdir(), 'gateway-observe-'));
  const store = createSqliteStore(join(directory, 'gateway.db'));
  try {
    await store.migrate();
    const key = sampleKey();
    await store.insertKey(key);
    const order: string[] = [];
    const observed = observeReceipts(store, (receipt) => order.push(`observed ${receipt.id}`));
    await observed.recordReceipt(sampleReceipt({ id: 'rcpt_1', keyId: key.id }));
    order.push('answer ended');
    assert.deepEqual(order, ['answer ended'], 'the writer went on before the receipt was observed');
    await nextCheck();
    assert.deepEqual(order, ['answer ended', 'observed rcpt_1']);
    const receipt = sampleReceipt({ id: 'rcpt_1', keyId: key.id });
    assert.equal((await store.getReceipt(receipt.accountId, 'rcpt_1'))?.id, 'rcpt_1', 'written before it was observed');
  } finally {
    await store.close();
    await rm(directory, { recursive: true, force: true });
  }
});
