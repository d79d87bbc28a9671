import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { issueApiKey } from '../src/auth/issue-api-key.ts';
import { NANO_PER_USD } from '../src/lib/money.ts';
import { createSqliteStore } from '../src/storage/sqlite/sqlite-store.ts';
import { DEFAULT_ACCOUNT_ID } from '../src/storage/store.ts';
import { startFakeUpstream } from './fake-upstream/fake-upstream.ts';
import { harnessConfigText } from './helpers/gateway-harness.ts';
import { startGatewayProcess } from './helpers/gateway-process.ts';

test('a gateway killed mid-request leaves a hold that the next start releases, closing its receipt', async () => {
  const fake = await startFakeUpstream();
  const directory = await mkdtemp(join(tmpdir(), 'gateway-crash-'));
  const databasePath = join(directory, 'gateway.db');
  const configPath = join(directory, 'gateway.yaml');
  await writeFile(configPath, harnessConfigText(fake.url, databasePath, 30_000));

  const store = createSqliteStore(databasePath);
  await store.migrate();
  await store.addFunds(DEFAULT_ACCOUNT_ID, 5 * NANO_PER_USD, 'test');
  const { key } = await issueApiKey(store, { name: 'crash' });

  const first = await startGatewayProcess(configPath);
  try {
    fake.script('alpha', { hang: true });
    const pending = fetch(`${first.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'up/alpha', messages: [{ role: 'user', content: 'never answered' }], max_tokens: 500 }),
    }).catch((error) => error);
    let holds = await store.listHolds(DEFAULT_ACCOUNT_ID);
    for (let tries = 0; holds.length === 0 && tries < 200; tries++) {
      await sleep(20);
      holds = await store.listHolds(DEFAULT_ACCOUNT_ID);
    }
    assert.equal(holds.length, 1, 'the request holds its worst case');
    while (fake.requests.length === 0) await sleep(10);
    await first.stop('SIGKILL');
    await pending;
    assert.equal((await store.listHolds(DEFAULT_ACCOUNT_ID)).length, 1, 'the dead process left its hold');
    assert.equal((await store.accountSummary(DEFAULT_ACCOUNT_ID, new Date().toISOString().slice(0, 7))).heldNano, holds[0]!.amountNano);

    const second = await startGatewayProcess(configPath);
    try {
      assert.deepEqual(await store.listHolds(DEFAULT_ACCOUNT_ID), [], 'released at start');
      const receipt = await store.getReceipt(DEFAULT_ACCOUNT_ID, holds[0]!.id);
      // The provider was called: the prompt's estimated input is charged, recorded on the hold.
      const estimate = holds[0]!.estimatedCostNano!;
      assert.ok(estimate > 0 && estimate < holds[0]!.amountNano, `estimate ${estimate}`);
      assert.deepEqual(
        [receipt?.status, receipt?.costNano, receipt?.usageEstimated, receipt?.holdNano, receipt?.errorCode],
        ['failed', estimate, true, holds[0]!.amountNano, 'internal_error'],
      );
      assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 5 * NANO_PER_USD - estimate, 'the estimate charged, nothing lost');
      const totals = await store.ledgerTotals(DEFAULT_ACCOUNT_ID);
      assert.equal(totals.funds - totals.charges, await store.getBalance(DEFAULT_ACCOUNT_ID));
      const answer = await fetch(`${second.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'up/alpha', messages: [{ role: 'user', content: 'hello again' }] }),
      });
      assert.equal(answer.status, 200);
    } finally {
      await second.stop();
    }
  } finally {
    await first.stop('SIGKILL');
    await store.close();
    await fake.close();
    await rm(directory, { recursive: true, force: true });
  }
});
