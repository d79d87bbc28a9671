import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { issueApiKey } from '../src/auth/issue-api-key.ts';
import { worstCaseCost } from '../src/billing/worst-case.ts';
import { PromptMeasure } from '../src/tokens/token-estimate.ts';
import { ModelCatalog } from '../src/routing/model-catalog.ts';
import { parseChatCompletionRequest } from '../src/formats/openai-chat/parse-chat-request.ts';
import { postgresUnreachable, reportPostgresUnreachable } from './helpers/postgres-test-connection.ts';
import { DEFAULT_ACCOUNT_ID, type Store } from '../src/storage/store.ts';
import type { FakeUpstream } from './fake-upstream/fake-upstream.ts';
import { buildServer } from './helpers/build-server.ts';
import type { GatewayProcess } from './helpers/gateway-process.ts';
import { startGatewayFleet, type GatewayFleet } from './helpers/gateway-fleet.ts';
import { Redis } from 'ioredis';
import { createRedisHoldJournal, DEFAULT_HOLD_JOURNAL_PREFIX } from '../src/storage/postgres/redis-hold-journal.ts';
import { deleteKeysUnder, REDIS_TEST_URL } from './helpers/redis-test-connection.ts';

const body = { model: 'up/alpha', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 1000 };

const missing = await postgresUnreachable();

if (missing !== null) {
  reportPostgresUnreachable('scale-out', missing);
} else {
  describe('several gateway processes on one PostgreSQL', () => {
    let fleet: GatewayFleet;
    let fake: FakeUpstream;
    let store: Store;
    let gateways: GatewayProcess[] = [];
    let worst: number;
    let journalRedis: Redis | undefined;
    let journalScope: string | undefined;

    before(async () => {
      buildServer(); // the CLI below runs the compiled build (bin/gateway.js)
      fleet = await startGatewayFleet({ name: 'scale', extraConfig: 'limits: { hold_ttl_seconds: 6 }' });
      ({ fake, store, gateways } = fleet);
      // The processes journal the holds of their leases in Redis: this store reads them there too.
      journalRedis = new Redis(REDIS_TEST_URL);
      store.useHoldJournal!(createRedisHoldJournal(journalRedis));
      journalScope = (await fleet.sql.query<{ id: string }>('SELECT id FROM ledger_identity')).rows[0]!.id;
      worst = worstCaseCost(new PromptMeasure(parseChatCompletionRequest(body).request), [new ModelCatalog(fleet.config).models.get('up/alpha')!]);
    });

    after(async () => {
      await fleet?.close();
      // What the processes killed at the end left in the journal.
      if (journalScope) await deleteKeysUnder(journalRedis!, `${DEFAULT_HOLD_JOURNAL_PREFIX}${journalScope}`);
      journalRedis?.disconnect();
    });

    const post = (gateway: GatewayProcess, key: string) =>
      fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });

    /** `count` requests at once, spread over every process, against an upstream slower than the burst. */
    async function burst(count: number, key: string) {
      fake.script('alpha', ...Array.from({ length: count }, () => ({ text: 'ok', headerDelayMs: 2_500, usage: { prompt: 12, completion: 2 } })));
      const responses = await Promise.all(Array.from({ length: count }, (_, index) => post(gateways[index % gateways.length]!, key)));
      return Promise.all(responses.map(async (response) => ({ status: response.status, json: (await response.json()) as any })));
    }

    async function assertInvariant() {
      const totals = await store.ledgerTotals(DEFAULT_ACCOUNT_ID);
      assert.equal(totals.funds - totals.charges, await store.getBalance(DEFAULT_ACCOUNT_ID), 'funds added minus charges equals balance');
      assert.deepEqual(await store.listHolds(DEFAULT_ACCOUNT_ID), [], 'every hold belongs to a request in flight');
    }

    test('a balance for 5 worst cases serves exactly 5 of 120 parallel requests across 3 processes', async () => {
      await store.addFunds(DEFAULT_ACCOUNT_ID, worst * 5 + Math.floor(worst / 2), 'test');
      const { key } = await issueApiKey(store, { name: 'balance' });
      const results = await burst(120, key);
      assert.equal(results.filter((result) => result.status === 200).length, 5);
      assert.ok(
        results
          .filter((result) => result.status !== 200)
          .every((result) => result.status === 402 && result.json.error.code === 'insufficient_balance'),
      );
      assert.ok((await store.getBalance(DEFAULT_ACCOUNT_ID)) >= 0);
      await assertInvariant();
    });

    test("a key's daily limit and the monthly budget hold across processes", async () => {
      await store.addFunds(DEFAULT_ACCOUNT_ID, worst * 1000, 'test');
      const { key } = await issueApiKey(store, { name: 'daily', dailyLimitNano: worst * 3 });
      let results = await burst(60, key);
      assert.equal(results.filter((result) => result.status === 200).length, 3);
      assert.ok(results.filter((result) => result.status !== 200).every((result) => result.json.error.code === 'budget_exceeded'));

      const month = new Date().toISOString().slice(0, 7);
      const spent = (await store.accountSummary(DEFAULT_ACCOUNT_ID, month)).monthChargedNano;
      await store.setMonthlyBudget(DEFAULT_ACCOUNT_ID, spent + worst * 4, 'test');
      const { key: other } = await issueApiKey(store, { name: 'monthly' });
      results = await burst(60, other);
      assert.equal(results.filter((result) => result.status === 200).length, 4);
      await store.setMonthlyBudget(DEFAULT_ACCOUNT_ID, null, 'test');
      await assertInvariant();
    });

    test('a revocation with the CLI is refused by every process on the next request', async () => {
      const { key, record } = await issueApiKey(store, { name: 'revoked' });
      for (const gateway of gateways) assert.equal((await post(gateway, key)).status, 200, 'warm the key cache everywhere');
      const cli = spawnSync(process.execPath, ['bin/gateway.js', 'keys', 'revoke', record.prefix], {
        env: { ...process.env, ...fleet.env },
        encoding: 'utf8',
      });
      assert.equal(cli.status, 0, cli.stderr);
      for (const gateway of gateways) {
        const response = await post(gateway, key);
        assert.equal(response.status, 401);
        assert.equal(((await response.json()) as any).error.code, 'key_revoked');
      }
    });

    test('a revocation written past Redis (straight to the database) is still noticed within a second', async () => {
      const { key, record } = await issueApiKey(store, { name: 'quiet' });
      for (const gateway of gateways) assert.equal((await post(gateway, key)).status, 200);
      await store.revokeKey(DEFAULT_ACCOUNT_ID, record.id, new Date().toISOString(), 'test');
      await sleep(1_100);
      for (const gateway of gateways) assert.equal((await post(gateway, key)).status, 401);
    });

    test('a rate limit is global across processes', async () => {
      const { key } = await issueApiKey(store, { name: 'rated', rateLimitPerMinute: 10 });
      const responses = await Promise.all(Array.from({ length: 30 }, (_, index) => post(gateways[index % gateways.length]!, key)));
      const statuses = responses.map((response) => response.status);
      assert.equal(statuses.filter((status) => status === 200).length, 10, `statuses: ${statuses.join(',')}`);
      assert.ok(responses.filter((response) => response.status === 429).every((response) => Number(response.headers.get('retry-after')) >= 1));
    });

    test('killing a process mid-request: another process releases its holds, nothing lost', async () => {
      const { key } = await issueApiKey(store, { name: 'crash' });
      const balance = await store.getBalance(DEFAULT_ACCOUNT_ID);
      fake.script('alpha', { hang: true });
      const victim = gateways.pop()!;
      const pending = post(victim, key).catch((error) => error);
      while ((await store.listHolds(DEFAULT_ACCOUNT_ID)).length === 0) await sleep(20);
      const [hold] = await store.listHolds(DEFAULT_ACCOUNT_ID);
      await victim.stop('SIGKILL');
      await pending;
      for (let tries = 0; (await store.listHolds(DEFAULT_ACCOUNT_ID)).length > 0 && tries < 100; tries++) await sleep(100);
      assert.deepEqual(await store.listHolds(DEFAULT_ACCOUNT_ID), [], 'released by a surviving process');
      const receipt = await store.getReceipt(DEFAULT_ACCOUNT_ID, hold!.id);
      // Its provider was called: charged the prompt's estimated input, recorded on the hold.
      assert.ok(hold!.estimatedCostNano! > 0);
      assert.deepEqual([receipt?.status, receipt?.costNano], ['failed', hold!.estimatedCostNano]);
      assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), balance - hold!.estimatedCostNano!);
      await assertInvariant();
    });
  });
}
