import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { countTextTokens } from '../src/tokens/text-token-count.ts';
import { DEFAULT_ACCOUNT_ID } from '../src/storage/store.ts';
import { readUntil, startHarness, sseData, type Harness } from './helpers/gateway-harness.ts';

let harness: Harness;
before(async () => {
  harness = await startHarness({ timeoutMs: 10_000 });
});
after(() => harness.close());

/** A seeded generator, so a failure can be replayed. */
function seeded(seed: number) {
  return () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
}

const answer = Array.from({ length: 120 }, (_, index) => `word${index}`).join(' ');

test('streams cancelled at random points: charged for what was generated, hold released, ledger exact', async () => {
  const random = seeded(20261121);
  const store = harness.gateway.deps.store;
  for (let round = 0; round < 8; round++) {
    harness.fake.reset();
    harness.fake.script('alpha', { text: answer, chunkSize: 6, chunkDelayMs: 15 });
    const stopAfter = 1 + Math.floor(random() * 12);
    const response = await harness.post('/v1/chat/completions', {
      model: 'up/alpha',
      messages: [{ role: 'user', content: 'tell me' }],
      stream: true,
    });
    const receiptId = response.headers.get('x-svc-receipt-id')!;
    const reader = response.body!.getReader();
    const raw = await readUntil(reader, (text) => sseData(text).length >= stopAfter + 1);
    await reader.cancel();
    const received = sseData(raw)
      .map((data) => JSON.parse(data).choices?.[0]?.delta?.content ?? '')
      .join('');

    let receipt: any;
    for (let tries = 0; tries < 100 && !receipt; tries++) {
      const found = await harness.get(`/v1/receipts/${receiptId}`);
      if (found.status === 200) receipt = await found.json();
      else await sleep(10);
    }
    assert.equal(receipt.status, 'cancelled', `round ${round}`);
    assert.equal(receipt.usage_estimated, true);
    // What was generated lies between what reached us and the whole answer.
    assert.ok(
      receipt.usage.completion_tokens >= (await countTextTokens(received)),
      `round ${round}: billed ${receipt.usage.completion_tokens} for ${received.length} chars received`,
    );
    assert.ok(receipt.usage.completion_tokens < (await countTextTokens(answer)), `round ${round}: not the whole answer`);
    assert.notEqual(receipt.cost, '0.000000000');
    assert.deepEqual(await store.listHolds(DEFAULT_ACCOUNT_ID), [], `round ${round}: hold released`);
  }
  const totals = await store.ledgerTotals(DEFAULT_ACCOUNT_ID);
  assert.equal(totals.funds - totals.charges, await store.getBalance(DEFAULT_ACCOUNT_ID));
});
