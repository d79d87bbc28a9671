import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream/fake-upstream.ts';
import { harnessConfigText } from './helpers/gateway-harness.ts';
import { startGatewayProcess, type GatewayProcess } from './helpers/gateway-process.ts';
import { PG_TEST_URL, postgresUnreachable, reportPostgresUnreachable, urlOnSchema } from './helpers/postgres-test-connection.ts';
import { connectTestRedis, reportRedisUnreachable, REDIS_TEST_URL } from './helpers/redis-test-connection.ts';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.ts';

const pgMissing = await postgresUnreachable();
const redis = await connectTestRedis();
const redisMissing = 'unreachable' in redis ? redis.unreachable : null;
if (!('unreachable' in redis)) redis.disconnect();

if (pgMissing !== null) {
  reportPostgresUnreachable('readiness', pgMissing);
} else if (redisMissing !== null) {
  reportRedisUnreachable('readiness', redisMissing);
} else {
  describe('/health and /ready of a gateway process whose PostgreSQL and Redis stop answering', () => {
    const schema = `gw_ready_${randomBytes(5).toString('hex')}`;
    const admin = new pg.Pool({ connectionString: PG_TEST_URL, max: 1 });
    let directory: string;
    let fake: FakeUpstream;
    let database: TcpProxy;
    let redisProxy: TcpProxy;
    let gateway: GatewayProcess;

    before(async () => {
      await admin.query(`CREATE SCHEMA ${schema}`);
      fake = await startFakeUpstream();
      directory = await mkdtemp(join(tmpdir(), 'gateway-ready-'));
      const configPath = join(directory, 'gateway.yaml');
      await writeFile(configPath, harnessConfigText(fake.url, join(directory, 'unused.db')));
      database = await startTcpProxy(Number(new URL(PG_TEST_URL).port || 5432));
      redisProxy = await startTcpProxy(Number(new URL(REDIS_TEST_URL).port || 6379), new URL(REDIS_TEST_URL).hostname);
      const databaseUrl = new URL(urlOnSchema(schema));
      databaseUrl.port = String(database.port);
      const redisUrl = new URL(REDIS_TEST_URL);
      redisUrl.port = String(redisProxy.port);
      gateway = await startGatewayProcess(configPath, { DATABASE_URL: databaseUrl.href, REDIS_URL: redisUrl.href });
    });

    after(async () => {
      await gateway?.stop('SIGKILL');
      await database?.close();
      await redisProxy?.close();
      await fake?.close();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
      await rm(directory, { recursive: true, force: true });
    });

    /** GET without any key. */
    const get = async (path: string) => {
      const response = await fetch(`${gateway.url}${path}`);
      return { status: response.status, body: (await response.json()) as any };
    };

    /** Polls /ready until it answers `status` (a dependency coming back reconnects in its own time). */
    async function readyBecomes(status: number, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      let last = await get('/ready');
      while (last.status !== status && Date.now() < deadline) {
        await sleep(100);
        last = await get('/ready');
      }
      return last;
    }

    test('both answer without an API key while everything is up', async () => {
      assert.deepEqual(await get('/health'), { status: 200, body: { status: 'ok' } });
      assert.deepEqual(await get('/ready'), { status: 200, body: { status: 'ready', checks: { database: 'ok', redis: 'ok' } } });
    });

    test('a PostgreSQL that stops answering: /ready is 503 within its probe timeout, /health stays 200, then ready again', async () => {
      database.stall();
      const started = Date.now();
      assert.deepEqual(await get('/ready'), { status: 503, body: { status: 'not_ready', checks: { database: 'timeout', redis: 'ok' } } });
      assert.ok(Date.now() - started < 2_500, 'the probe has a deadline');
      // The stuck query is not started again: the next check answers at once.
      const again = Date.now();
      assert.equal((await get('/ready')).body.checks.database, 'timeout');
      assert.ok(Date.now() - again < 500);
      assert.deepEqual(await get('/health'), { status: 200, body: { status: 'ok' } });
      database.restore();
      assert.equal((await readyBecomes(200)).status, 200);
    });

    test('a PostgreSQL that refuses connections, then Redis: /ready is 503 naming the one down, then ready again', async () => {
      database.refuse();
      const down = await readyBecomes(503);
      assert.equal(down.status, 503);
      assert.notEqual(down.body.checks.database, 'ok');
      assert.equal(down.body.checks.redis, 'ok');
      assert.doesNotMatch(JSON.stringify(down.body), /127\.0\.0\.1|ECONN|postgres/i, 'no detail of the failure reaches an unauthenticated caller');
      database.restore();
      assert.equal((await readyBecomes(200)).status, 200);

      redisProxy.refuse();
      const redisDown = await readyBecomes(503);
      assert.deepEqual(redisDown.body.checks, { database: 'ok', redis: 'failed' });
      redisProxy.restore();
      assert.equal((await readyBecomes(200, 8_000)).status, 200);
    });
  });
}
