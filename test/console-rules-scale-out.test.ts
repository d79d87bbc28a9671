import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { privateKeyToAccount } from 'viem/accounts';
import { issueApiKey } from '../src/auth/issue-api-key.ts';
import { connectTestRedis, REDIS_TEST_URL, reportRedisUnreachable } from './helpers/redis-test-connection.ts';
import { NANO_PER_USD } from '../src/lib/money.ts';
import { createPostgresStore } from '../src/storage/postgres/postgres-store.ts';
import { PG_TEST_URL, postgresUnreachable, reportPostgresUnreachable, urlOnSchema } from './helpers/postgres-test-connection.ts';
import { DEFAULT_ACCOUNT_ID } from '../src/storage/store.ts';
import { startFakeUpstream } from './fake-upstream/fake-upstream.ts';
import { consoleClient, json } from './helpers/console-client.ts';
import { harnessConfigText } from './helpers/gateway-harness.ts';
import { startGatewayProcess } from './helpers/gateway-process.ts';

const SUITE = 'console rules reach every gateway process (PostgreSQL + Redis)';
const postgres = await postgresUnreachable();
const redis = await connectTestRedis();

if (postgres !== null) reportPostgresUnreachable(SUITE, postgres);
else if ('unreachable' in redis) reportRedisUnreachable(SUITE, redis.unreachable);
else {
  redis.disconnect();
  test(`${SUITE}: a rule changed through one process's console reroutes chat on another within a second`, async () => {
    const schema = `gw_rules_${randomBytes(5).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_TEST_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    const fake = await startFakeUpstream();
    const directory = await mkdtemp(join(tmpdir(), 'gateway-rules-'));
    const configPath = join(directory, 'gateway.yaml');
    await writeFile(configPath, harnessConfigText(fake.url, join(directory, 'unused.db'), 30_000));
    const store = createPostgresStore(urlOnSchema(schema));
    await store.migrate();
    await store.addFunds(DEFAULT_ACCOUNT_ID, 5 * NANO_PER_USD, 'test');
    const { key } = await issueApiKey(store, { name: 'rules' });
    // Every process on one Redis key-change counter, as deployments share theirs.
    const env = { DATABASE_URL: urlOnSchema(schema), REDIS_URL: REDIS_TEST_URL };
    const [first, second] = await Promise.all([startGatewayProcess(configPath, env), startGatewayProcess(configPath, env)]);
    const chat = async (url: string) =>
      (
        await fetch(`${url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'svc/fast', messages: [{ role: 'user', content: 'hi' }] }),
        })
      ).headers.get('x-svc-model');
    try {
      assert.equal(await chat(second.url), 'up/alpha', 'the config file puts up/alpha first');
      const client = consoleClient(first.url);
      const session = await client.signIn(privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'));
      const changed = await client.call('PUT', '/rules', {
        body: { alias: 'svc/fast', candidates: ['up/beta', 'up/alpha'], reasoning: 'low' },
        session,
      });
      assert.equal(changed.status, 200, JSON.stringify(await json(changed)));
      const changedAt = Date.now();
      let model = await chat(second.url);
      while (model !== 'up/beta' && Date.now() - changedAt < 1_000) {
        await sleep(50);
        model = await chat(second.url);
      }
      assert.equal(model, 'up/beta', 'the other process follows the rule within a second');
      const listed = await json(await fetch(`${second.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } }));
      const alias = listed.data.find((entry: { id: string }) => entry.id === 'svc/fast');
      assert.deepEqual(alias.candidates, ['up/beta', 'up/alpha'], 'GET /v1/models shows the rule too');
    } finally {
      await Promise.all([first.stop(), second.stop()]);
      await store.close();
      await fake.close();
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
      await rm(directory, { recursive: true, force: true });
    }
  });
}
