import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { RequestMeter } from '../src/billing/request-meter.ts';
import type { ModelConfig } from '../src/config/schema.ts';
import { sampleHold } from '../src/testing/ledger-contract.ts';
import { createPostgresStore } from '../src/storage/postgres/postgres-store.ts';
import { sampleKey, sampleReceipt } from '../src/testing/store-contract.ts';
import { DEFAULT_ACCOUNT_ID, type Store } from '../src/storage/store.ts';
import { PG_TEST_URL, postgresUnreachable, reportPostgresUnreachable, urlOnSchema } from './helpers/postgres-test-connection.ts';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.ts';

// A model priced at $1 per million tokens in and out: 1,000 tokens cost 1,000,000 nano-USD.
const model = {
  id: 'up/alpha',
  price: { inputNanoPerMillion: 1e9, cachedInputNanoPerMillion: 1e9, cacheWriteNanoPerMillion: 1e9, outputNanoPerMillion: 1e9 },
  priceTiers: [],
} as unknown as ModelConfig;
const usage = { inputTokens: 600, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 400, reasoningTokens: 0 };

const missing = await postgresUnreachable();
if (missing !== null) {
  reportPostgresUnreachable('a commit whose reply is lost', missing);
} else {
  /**
   * The database commits a settlement and the connection breaks before its answer arrives: the
   * gateway cannot tell that from a settlement that never ran, so it settles again. The second
   * one must find the first: one receipt, one charge.
   */
  describe('a commit whose reply is lost (PostgreSQL behind a TCP proxy)', () => {
    const schema = `lost_reply_${randomBytes(5).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_TEST_URL });
    let proxy: TcpProxy;
    let store: Store;

    before(async () => {
      await admin.connect();
      await admin.query(`CREATE SCHEMA ${schema}`);
      proxy = await startTcpProxy(Number(new URL(PG_TEST_URL).port || 5432));
      const url = new URL(urlOnSchema(schema));
      url.port = String(proxy.port);
      store = createPostgresStore(url.href);
      await store.migrate();
      await store.insertKey(sampleKey());
      await store.addFunds(DEFAULT_ACCOUNT_ID, 10_000_000, 'test');
    });

    after(async () => {
      await store.close();
      await proxy.close();
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    });

    test('the store: a settlement sent again after its reply was lost leaves one receipt and one charge', async () => {
      const balance = await store.getBalance(DEFAULT_ACCOUNT_ID);
      await store.placeHold(sampleHold({ id: 'rcpt_store', amountNano: 50_000 }), null);
      const receipt = sampleReceipt({ id: 'rcpt_store', keyId: sampleKey().id, holdNano: 50_000, costNano: 12_345 });
      const dropped = proxy.dropReplyTo('gateway_record_receipt');
      await assert.rejects(store.recordReceipt(receipt), 'the reply never came');
      await dropped;
      assert.equal((await store.getReceipt(DEFAULT_ACCOUNT_ID, 'rcpt_store'))?.costNano, 12_345, 'yet it was committed');
      await store.recordReceipt(receipt);
      assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), balance - 12_345);
      const totals = await store.ledgerTotals(DEFAULT_ACCOUNT_ID);
      assert.equal(totals.funds - totals.charges, await store.getBalance(DEFAULT_ACCOUNT_ID));
      assert.deepEqual(await store.listHolds(DEFAULT_ACCOUNT_ID), []);
    });

    test('a request: the meter retries its settlement after the lost reply and is charged once', async () => {
      const balance = await store.getBalance(DEFAULT_ACCOUNT_ID);
      const meter = new RequestMeter(store, { owner: 'host/1/a', expiryFrom: (now) => new Date(now + 60_000).toISOString() });
      const request = meter.begin({
        requestId: 'req_meter',
        receiptId: 'rcpt_meter',
        key: sampleKey(),
        endpoint: 'chat.completions',
        stream: false,
        startedAt: Date.now(),
      });
      await request.reserve(5_000_000);
      request.answeredBy(model, usage, false);
      const dropped = proxy.dropReplyTo('gateway_record_receipt');
      const receipt = await request.settle('succeeded', null);
      await dropped;
      assert.equal(receipt.costNano, 1_000_000);
      const page = await store.listReceipts(DEFAULT_ACCOUNT_ID, { limit: 100 });
      assert.equal(page.data.filter((stored) => stored.id === 'rcpt_meter').length, 1, 'one receipt');
      assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), balance - 1_000_000, 'one charge');
      const month = new Date().toISOString().slice(0, 7);
      const day = new Date().toISOString().slice(0, 10);
      assert.equal((await store.keyDaySpend(sampleKey().id, day)).chargedNano, 1_000_000, 'counted once on the day');
      assert.ok((await store.accountSummary(DEFAULT_ACCOUNT_ID, month)).monthChargedNano >= 1_000_000);
      assert.deepEqual(await store.listHolds(DEFAULT_ACCOUNT_ID), []);
    });

    test('a hold placed again after its reply was lost is held once', async () => {
      const held = (await store.accountSummary(DEFAULT_ACCOUNT_ID, '2026-11')).heldNano;
      const hold = sampleHold({ id: 'rcpt_hold_retry', amountNano: 70_000 });
      const dropped = proxy.dropReplyTo('gateway_place_hold');
      await assert.rejects(store.placeHold(hold, null));
      await dropped;
      assert.deepEqual(await store.placeHold(hold, null), { placed: true });
      assert.equal((await store.accountSummary(DEFAULT_ACCOUNT_ID, '2026-11')).heldNano, held + 70_000);
      await store.recordReceipt(sampleReceipt({ id: 'rcpt_hold_retry', keyId: sampleKey().id, holdNano: 70_000, costNano: 0 }));
    });

    test('a batch whose reply was lost: each of its writes runs again alone and is applied once', async () => {
      const balance = await store.getBalance(DEFAULT_ACCOUNT_ID);
      const ids = ['rcpt_batch_1', 'rcpt_batch_2', 'rcpt_batch_3'];
      for (const id of ids) await store.placeHold(sampleHold({ id, amountNano: 9_000 }), null);
      const dropped = proxy.dropReplyTo('gateway_apply_batch');
      // Queued in one turn: one batch, whose answer is lost; the caller sees only the retries' results.
      await Promise.all(ids.map((id) => store.recordReceipt(sampleReceipt({ id, keyId: sampleKey().id, holdNano: 9_000, costNano: 1_000 }))));
      await dropped;
      assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), balance - 3_000);
      const totals = await store.ledgerTotals(DEFAULT_ACCOUNT_ID);
      assert.equal(totals.funds - totals.charges, await store.getBalance(DEFAULT_ACCOUNT_ID));
      assert.deepEqual(await store.listHolds(DEFAULT_ACCOUNT_ID), []);
    });
  });
}
