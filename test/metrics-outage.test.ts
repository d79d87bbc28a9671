import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
// @ts-expect-error: the parser ships without types.
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';
import { PG_TEST_URL, postgresUnreachable, reportPostgresUnreachable, urlOnSchema } from './helpers/postgres-test-connection.ts';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.ts';

const pgMissing = await postgresUnreachable();

/** One gauge's value in a scrape. */
function gauge(text: string, name: string): number {
  const family = (parsePrometheusTextFormat(text) as { name: string; metrics: { value: string }[] }[]).find((entry) => entry.name === name);
  assert.ok(family, `${name} is served`);
  return Number(family.metrics[0]!.value);
}

if (pgMissing !== null) {
  reportPostgresUnreachable('metrics while PostgreSQL is down', pgMissing);
} else {
  describe('GET /metrics while PostgreSQL stops answering, then refuses connections', () => {
    const schema = `gw_metrics_${randomBytes(5).toString('hex')}`;
    const admin = new pg.Pool({ connectionString: PG_TEST_URL, max: 1 });
    let database: TcpProxy;
    let harness: Harness;
    let logs = '';

    before(async () => {
      await admin.query(`CREATE SCHEMA ${schema}`);
      database = await startTcpProxy(Number(new URL(PG_TEST_URL).port || 5432), new URL(PG_TEST_URL).hostname);
      const url = new URL(urlOnSchema(schema));
      url.port = String(database.port);
      // The harness's gateway opens its store from DATABASE_URL, as `gateway start` does.
      process.env.DATABASE_URL = url.href;
      const sink = new Writable({
        write(chunk, _encoding, done) {
          logs += String(chunk);
          done();
        },
      });
      // The request in flight waits on its provider through every scrape below: longer than the harness's 1.5 s provider timeout on a loaded machine.
      harness = await startHarness({ timeoutMs: 30_000, logger: pino({ level: 'warn' }, sink) as unknown as FastifyBaseLogger });
    });

    after(async () => {
      database?.restore();
      await harness?.close();
      await database?.close();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    });

    const scrape = async () => {
      const started = Date.now();
      const response = await fetch(`${harness.gateway.url}/metrics`);
      return { status: response.status, text: await response.text(), ms: Date.now() - started };
    };

    test('the scrape answers with the last held amount, says the ledger is down, then up again', async () => {
      // A request waiting on its provider holds money: the gauge has something to remember.
      let answer!: () => void;
      harness.fake.script('alpha', { text: 'late', until: new Promise<void>((resolve) => (answer = resolve)) });
      const pending = harness.post('/v1/chat/completions', { model: 'up/alpha', messages: [{ role: 'user', content: 'hi' }] });
      while (harness.fake.requests.length === 0) await sleep(10);

      const up = await scrape();
      assert.equal(up.status, 200);
      const held = gauge(up.text, 'gateway_held_nano_usd');
      assert.ok(held > 0, 'the request in flight holds money');
      assert.equal(gauge(up.text, 'gateway_ledger_up'), 1);
      assert.equal(gauge(up.text, 'gateway_holds_in_flight'), 1);

      database.stall();
      const stalled = await scrape();
      assert.equal(stalled.status, 200, 'a database that hangs does not blank the scrape');
      assert.ok(stalled.ms < 3_000, `the scrape waits a bounded time for the ledger (${stalled.ms} ms)`);
      assert.equal(gauge(stalled.text, 'gateway_ledger_up'), 0);
      assert.equal(gauge(stalled.text, 'gateway_held_nano_usd'), held, 'the last value read');
      assert.ok(gauge(stalled.text, 'gateway_ledger_read_age_seconds') >= 0);
      assert.match(stalled.text, /gateway_requests_total\{/, 'every other metric is still there');
      assert.match(stalled.text, /gateway_process_resident_memory_bytes/);

      database.refuse();
      const refused = await scrape();
      assert.equal(refused.status, 200, 'a database that refuses connections does not either');
      assert.equal(gauge(refused.text, 'gateway_ledger_up'), 0);
      assert.equal(gauge(refused.text, 'gateway_held_nano_usd'), held);

      database.restore();
      answer();
      assert.equal((await pending).status, 200);
      let last = await scrape();
      for (let tries = 0; gauge(last.text, 'gateway_ledger_up') !== 1 && tries < 100; tries++) {
        await sleep(100);
        last = await scrape();
      }
      assert.equal(gauge(last.text, 'gateway_ledger_up'), 1, 'up again once the database answers');
      assert.equal(gauge(last.text, 'gateway_held_nano_usd'), 0, 'the hold was settled');
      const line = logs.split('\n').find((entry) => entry.includes('held amount could not be read'));
      assert.ok(line, 'the failed read is logged');
      assert.equal(JSON.parse(line).level, 40, 'as a JSON warn line');
    });
  });
}
