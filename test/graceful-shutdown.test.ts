import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import pg from 'pg';
import { issueApiKey } from '../src/auth/issue-api-key.ts';
import { NANO_PER_USD } from '../src/lib/money.ts';
import { createPostgresStore } from '../src/storage/postgres/postgres-store.ts';
import { createRedisHoldJournal, DEFAULT_HOLD_JOURNAL_PREFIX } from '../src/storage/postgres/redis-hold-journal.ts';
import { DEFAULT_ACCOUNT_ID, type Store } from '../src/storage/store.ts';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream/fake-upstream.ts';
import { harnessConfigText, sseData } from './helpers/gateway-harness.ts';
import { startGatewayProcess, type GatewayProcess, type GatewayProcessOptions } from './helpers/gateway-process.ts';
import { PG_TEST_URL, postgresUnreachable, reportPostgresUnreachable, urlOnSchema } from './helpers/postgres-test-connection.ts';
import { connectTestRedis, deleteKeysUnder, reportRedisUnreachable, REDIS_TEST_URL } from './helpers/redis-test-connection.ts';
import { startTcpProxy } from './helpers/tcp-proxy.ts';

const pgMissing = await postgresUnreachable();
const redis = await connectTestRedis();
const redisMissing = 'unreachable' in redis ? redis.unreachable : null;
if (!('unreachable' in redis)) redis.disconnect();

if (pgMissing !== null) {
  reportPostgresUnreachable('graceful shutdown', pgMissing);
} else if (redisMissing !== null) {
  reportRedisUnreachable('graceful shutdown', redisMissing);
} else {
  describe('graceful shutdown of a gateway process on PostgreSQL and Redis', () => {
    const schema = `gw_shutdown_${randomBytes(5).toString('hex')}`;
    const admin = new pg.Pool({ connectionString: PG_TEST_URL, max: 1 });
    let directory: string;
    let fake: FakeUpstream;
    let store: Store;
    let key: string;
    let journalRedis: Redis | undefined;
    let journalScope = '';
    const started: GatewayProcess[] = [];

    before(async () => {
      await admin.query(`CREATE SCHEMA ${schema}`);
      fake = await startFakeUpstream();
      directory = await mkdtemp(join(tmpdir(), 'gateway-shutdown-'));
      store = createPostgresStore(urlOnSchema(schema));
      // The processes journal the holds of their leases in Redis: this store reads them there too.
      journalRedis = new Redis(REDIS_TEST_URL);
      store.useHoldJournal!(createRedisHoldJournal(journalRedis));
      await store.migrate();
      journalScope = (await admin.query<{ id: string }>(`SELECT id FROM ${schema}.ledger_identity`)).rows[0]!.id;
      await store.addFunds(DEFAULT_ACCOUNT_ID, 100 * NANO_PER_USD, 'test');
      ({ key } = await issueApiKey(store, { name: 'shutdown', rateLimitPerMinute: 1_000_000 }));
    });

    after(async () => {
      await Promise.all(started.map((gateway) => gateway.stop('SIGKILL')));
      await store?.close();
      if (journalRedis && journalScope) await deleteKeysUnder(journalRedis, `${DEFAULT_HOLD_JOURNAL_PREFIX}${journalScope}`);
      journalRedis?.disconnect();
      await fake?.close();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
      await rm(directory, { recursive: true, force: true });
    });

    /** A gateway process on this suite's schema (or `databaseUrl`), with `server` settings added to the harness config. */
    async function startGateway(server: string, options: GatewayProcessOptions & { databaseUrl?: string } = {}) {
      const configPath = join(directory, `gateway-${randomBytes(4).toString('hex')}.yaml`);
      const text = harnessConfigText(fake.url, join(directory, 'unused.db'), 30_000).replace(
        'server: { host: 127.0.0.1, port: 0 }',
        `server: { host: 127.0.0.1, port: 0${server ? `, ${server}` : ''} }`,
      );
      await writeFile(configPath, text);
      const gateway = await startGatewayProcess(
        configPath,
        { DATABASE_URL: options.databaseUrl ?? urlOnSchema(schema), REDIS_URL: REDIS_TEST_URL },
        options,
      );
      started.push(gateway);
      return gateway;
    }

    const chat = (gateway: GatewayProcess, body: Record<string, unknown>) =>
      fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'up/alpha', messages: [{ role: 'user', content: 'hello' }], max_tokens: 200, ...body }),
      });

    async function waitForHolds(count: number): Promise<void> {
      for (let tries = 0; tries < 500 && (await store.listHolds(DEFAULT_ACCOUNT_ID)).length < count; tries++) await sleep(10);
    }

    async function assertLedgerExact(): Promise<void> {
      const totals = await store.ledgerTotals(DEFAULT_ACCOUNT_ID);
      assert.equal(totals.funds - totals.charges, await store.getBalance(DEFAULT_ACCOUNT_ID), 'funds minus charges is the balance');
      assert.deepEqual(await store.listHolds(DEFAULT_ACCOUNT_ID), [], 'no hold is left');
    }

    test('SIGTERM with a stream in flight: the stream completes, its receipt is written, the process exits 0 (compiled build)', async () => {
      const gateway = await startGateway('drain_ms: 10000', { compiled: true });
      fake.script('alpha', { text: 'word '.repeat(40), chunkSize: 5, chunkDelayMs: 25, usage: { prompt: 9, completion: 40 } });
      const response = await chat(gateway, { stream: true, stream_options: { include_usage: true } });
      assert.equal(response.status, 200);
      const receiptId = response.headers.get('x-svc-receipt-id')!;
      const body = response.text();
      const stopping = gateway.stop('SIGTERM');
      const events = sseData(await body);
      assert.equal(events.at(-1), '[DONE]', 'the stream ran to its end');
      assert.deepEqual(await stopping, { code: 0, signal: null });
      const receipt = await store.getReceipt(DEFAULT_ACCOUNT_ID, receiptId);
      assert.deepEqual([receipt?.status, receipt?.usage?.outputTokens], ['succeeded', 40]);
      assert.ok(receipt!.costNano > 0);
      assert.match(gateway.output(), /"msg":"shut down"/);
      await assertLedgerExact();
    });

    test('SIGTERM with server.ready_grace_ms: /ready answers 503 while new requests are still served, then the gateway drains and exits 0', async () => {
      const gateway = await startGateway('ready_grace_ms: 4000');
      fake.reset();
      assert.equal((await fetch(`${gateway.url}/ready`)).status, 200);
      gateway.child.kill('SIGTERM');
      let ready = await fetch(`${gateway.url}/ready`);
      for (let tries = 0; ready.status === 200 && tries < 200; tries++) ready = await fetch(`${gateway.url}/ready`);
      assert.deepEqual([ready.status, await ready.json()], [503, { status: 'stopping', checks: {} }]);
      const served = await chat(gateway, {});
      assert.equal(served.status, 200, 'a request sent in the grace is served');
      assert.deepEqual(await gateway.exited, { code: 0, signal: null }, gateway.output());
      const output = gateway.output();
      assert.ok(output.indexOf('stopping: /ready answers 503') < output.indexOf('"msg":"shutting down"'), 'the listener closes after the grace');
      await assertLedgerExact();
    });

    test('requests their clients abandon, then SIGTERM: the process exits promptly, each request settled, no hold left', async () => {
      const gateway = await startGateway('drain_ms: 10000');
      const { port } = new URL(gateway.url);
      fake.script('alpha', ...Array.from({ length: 200 }, (_, index) => ({ text: 'ok', headerDelayMs: index % 4 === 0 ? 0 : 400 })));
      const body = JSON.stringify({ model: 'up/alpha', messages: [{ role: 'user', content: 'abandoned' }], max_tokens: 50 });
      const request = `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      // As a load generator whose time is up: clients that leave at every stage of their request.
      const sockets = Array.from({ length: 120 }, (_, index) => {
        const socket = connect(Number(port), '127.0.0.1');
        socket.on('error', () => {});
        if (index % 3 !== 2) socket.write(request);
        return socket;
      });
      await sleep(150);
      for (const [index, socket] of sockets.entries()) if (index % 2 === 0) socket.destroy();
      await sleep(100);
      for (const socket of sockets) socket.destroy();
      const abandonedAt = Date.now();
      await sleep(200);
      const exit = await gateway.stop('SIGTERM');
      assert.deepEqual(exit, { code: 0, signal: null }, gateway.output());
      assert.ok(Date.now() - abandonedAt < 4_000, `exited ${Date.now() - abandonedAt} ms after the clients left, well inside the 10 s drain`);
      await assertLedgerExact();
      const { data } = await store.listReceipts(DEFAULT_ACCOUNT_ID, { limit: 500 });
      const abandoned = data.filter((receipt) => receipt.requestedModel === 'up/alpha' || receipt.requestedModel === null);
      assert.ok(abandoned.length > 0);
      for (const receipt of abandoned) {
        if (receipt.status === 'succeeded') continue;
        assert.deepEqual([receipt.status, receipt.errorCode], ['cancelled', 'request_cancelled']);
        // Cancelled before a provider answered: no hold yet (cost 0), or the prompt the provider read.
        if (receipt.holdNano === 0) assert.equal(receipt.costNano, 0);
      }
    });

    test('a second SIGTERM exits at once, leaving the hold in flight for the next process to release', async () => {
      const gateway = await startGateway('drain_ms: 30000');
      // Replies the abandoned requests of the test before did not take would answer first.
      fake.reset();
      fake.script('alpha', { hang: true });
      const pending = chat(gateway, {}).catch((error) => error);
      await waitForHolds(1);
      const [hold] = await store.listHolds(DEFAULT_ACCOUNT_ID);
      gateway.child.kill('SIGTERM');
      await sleep(300);
      assert.equal(gateway.child.exitCode, null, 'still draining');
      const secondAt = Date.now();
      const exit = await gateway.stop('SIGTERM');
      // At once, not after the 30 s drain: the margin is for a loaded machine (it took over 1 s at load 7).
      assert.ok(Date.now() - secondAt < 10_000, 'the second signal exits without draining');
      assert.deepEqual(exit, { code: 1, signal: null });
      await pending;
      assert.deepEqual(
        (await store.listHolds(DEFAULT_ACCOUNT_ID)).map((left) => left.id),
        [hold!.id],
        'the hold is left for recovery',
      );
      const next = await startGateway('');
      assert.deepEqual(await store.listHolds(DEFAULT_ACCOUNT_ID), [], 'the next process released it');
      assert.deepEqual(await next.stop(), { code: 0, signal: null });
      const receipt = await store.getReceipt(DEFAULT_ACCOUNT_ID, hold!.id);
      // Recovery charges the prompt estimate recorded on the hold: the provider was called.
      assert.deepEqual([receipt?.status, receipt?.costNano], ['failed', hold!.estimatedCostNano ?? 0]);
      await assertLedgerExact();
    });

    test('a database that stops answering during shutdown: each step meets its deadline, the process exits 1, the hold waits for recovery', async () => {
      const proxy = await startTcpProxy(Number(new URL(PG_TEST_URL).port || 5432));
      try {
        const url = new URL(urlOnSchema(schema));
        url.port = String(proxy.port);
        const gateway = await startGateway('drain_ms: 300, close_timeout_ms: 400', { databaseUrl: url.href });
        fake.script('alpha', { hang: true });
        const pending = chat(gateway, {}).catch((error) => error);
        await waitForHolds(1);
        proxy.stall();
        const stoppedAt = Date.now();
        const exit = await gateway.stop('SIGTERM');
        const took = Date.now() - stoppedAt;
        assert.deepEqual(exit, { code: 1, signal: null }, gateway.output());
        assert.ok(took < 4_000, `bounded: ${took} ms`);
        assert.match(gateway.output(), /shutdown did not finish cleanly/);
        await pending;
        assert.equal((await store.listHolds(DEFAULT_ACCOUNT_ID)).length, 1, 'the hold could not be released');
        proxy.restore();
        await (await startGateway('')).stop();
        await assertLedgerExact();
      } finally {
        await proxy.close();
      }
    });
  });
}
