import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSqliteStore } from '../storage/sqlite/sqlite-store.ts';
import { sampleKey } from '../testing/store-contract.ts';
import { DEFAULT_ACCOUNT_ID, type Store } from '../storage/store.ts';
import { RequestMeter } from './request-meter.ts';

/** A migrated in-memory SQLite store holding one key, its account funded with 1,000,000 nano. */
async function fundedStore() {
  const real = createSqliteStore(':memory:');
  await real.migrate();
  const key = sampleKey();
  await real.insertKey(key);
  await real.addFunds(DEFAULT_ACCOUNT_ID, 1_000_000, 'test');
  return { real, key };
}

test('a settlement the database refuses once is retried: the charge is recorded and the hold released', async () => {
  const { real, key } = await fundedStore();
  let failures = 1;
  // The real store, with one transient failure injected in front of it.
  const store: Store = {
    ...real,
    async recordReceipt(receipt) {
      if (failures-- > 0) throw new Error('database is locked');
      return real.recordReceipt(receipt);
    },
  };
  const meter = new RequestMeter(store, { owner: 'host/1/a', expiryFrom: (now) => new Date(now + 60_000).toISOString() });
  const request = meter.begin({ requestId: 'req_1', receiptId: 'rcpt_1', key, endpoint: 'chat.completions', stream: false, startedAt: Date.now() });
  await request.reserve(5_000);
  assert.equal((await real.listHolds(DEFAULT_ACCOUNT_ID)).length, 1);
  await request.settle('failed', 'provider_unavailable');
  assert.deepEqual(await real.listHolds(DEFAULT_ACCOUNT_ID), []);
  assert.equal((await real.getReceipt(DEFAULT_ACCOUNT_ID, 'rcpt_1'))?.holdNano, 5_000);
  assert.equal(meter.inFlight, 0);
  await real.close();
});

test('only requests in flight are live: a settlement that fails for good stops renewing its hold', async () => {
  const { real, key } = await fundedStore();
  const store: Store = {
    ...real,
    async recordReceipt() {
      throw new Error('database is gone');
    },
  };
  const live = new Set<string>();
  const meter = new RequestMeter(store, { owner: 'host/1/a', expiryFrom: (now) => new Date(now + 60_000).toISOString(), live });
  const ok = meter.begin({ requestId: 'req_ok', receiptId: 'rcpt_ok', key, endpoint: 'chat.completions', stream: false, startedAt: Date.now() });
  const doomed = meter.begin({
    requestId: 'req_doomed',
    receiptId: 'rcpt_doomed',
    key,
    endpoint: 'chat.completions',
    stream: false,
    startedAt: Date.now(),
  });
  await doomed.reserve(5_000);
  assert.deepEqual([...live].sort(), ['rcpt_doomed', 'rcpt_ok']);
  await assert.rejects(doomed.settle('succeeded', null), /database is gone/);
  assert.deepEqual([...live], ['rcpt_ok'], 'its hold is left to expire and be recovered');
  ok.abandon();
  assert.deepEqual([...live], []);
  assert.equal((await real.listHolds(DEFAULT_ACCOUNT_ID)).length, 1, 'the hold is still there, no longer renewed');
  await real.close();
});
