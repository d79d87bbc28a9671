import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
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

/** Start `gateway start` as a real process; resolves with its base URL once it listens. */
async function startGatewayProcess(configPath: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['bin/gateway.js', 'start', '--config', configPath], {
    env: { ...process.env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${output}`)), 20_000);
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      const match = /gateway listening on (http:\/\/[^/\s"]+)\/v1/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.stderr!.on('data', (chunk) => (output += chunk));
    child.on('exit', (code) => reject(new Error(`gateway exited with ${code}:\n${output}`)));
  });
  return { child, url };
}

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
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    await pending;
    assert.equal((await store.listHolds(DEFAULT_ACCOUNT_ID)).length, 1, 'the dead process left its hold');
    assert.equal((await store.accountSummary(DEFAULT_ACCOUNT_ID, new Date().toISOString().slice(0, 7))).heldNano, holds[0]!.amountNano);

    const second = await startGatewayProcess(configPath);
    try {
      assert.deepEqual(await store.listHolds(DEFAULT_ACCOUNT_ID), [], 'released at start');
      const receipt = await store.getReceipt(DEFAULT_ACCOUNT_ID, holds[0]!.id);
      assert.deepEqual([receipt?.status, receipt?.costNano, receipt?.holdNano, receipt?.errorCode], ['failed', 0, holds[0]!.amountNano, 'internal_error']);
      assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 5 * NANO_PER_USD, 'nothing charged, nothing lost');
      const totals = await store.ledgerTotals(DEFAULT_ACCOUNT_ID);
      assert.equal(totals.funds - totals.charges, await store.getBalance(DEFAULT_ACCOUNT_ID));
      const answer = await fetch(`${second.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'up/alpha', messages: [{ role: 'user', content: 'hello again' }] }),
      });
      assert.equal(answer.status, 200);
    } finally {
      second.child.kill('SIGTERM');
      await new Promise((resolve) => second.child.once('exit', resolve));
    }
  } finally {
    first.child.kill('SIGKILL');
    await store.close();
    await fake.close();
    await rm(directory, { recursive: true, force: true });
  }
});
