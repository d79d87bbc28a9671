import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import pg from 'pg';
import { issueApiKey } from '../src/auth/issue-api-key.ts';
import { formatUsd, NANO_PER_USD, parseUsd } from '../src/lib/money.ts';
import { createPostgresStore } from '../src/storage/postgres/postgres-store.ts';
import { PG_TEST_URL, postgresUnreachable, reportPostgresUnreachable, urlOnSchema } from './helpers/postgres-test-connection.ts';
import { createSqliteStore } from '../src/storage/sqlite/sqlite-store.ts';
import { DEFAULT_ACCOUNT_ID, type Store } from '../src/storage/store.ts';
import { startFakeUpstream } from './fake-upstream/fake-upstream.ts';
import { FIX_INPUT, GOOD_EDIT, readEvents } from './helpers/fix-fixtures.ts';
import { harnessConfigText } from './helpers/gateway-harness.ts';
import { startGatewayProcess } from './helpers/gateway-process.ts';

interface Backend {
  name: string;
  /** The store the test reads, and the environment that points gateway processes at the same one. */
  open(directory: string): Promise<{ store: Store; env: NodeJS.ProcessEnv; databasePath: string; drop(): Promise<void> }>;
}

const sqlite: Backend = {
  name: 'SQLite',
  async open(directory) {
    const databasePath = join(directory, 'gateway.db');
    return { store: createSqliteStore(databasePath), env: {}, databasePath, drop: async () => {} };
  },
};

const postgres: Backend = {
  name: 'PostgreSQL',
  async open(directory) {
    const schema = `gw_fix_${randomBytes(5).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_TEST_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    return {
      store: createPostgresStore(urlOnSchema(schema)),
      env: { DATABASE_URL: urlOnSchema(schema) },
      databasePath: join(directory, 'unused.db'),
      async drop() {
        await admin.query(`DROP SCHEMA ${schema} CASCADE`);
        await admin.end();
      },
    };
  },
};

async function gatewayKilledMidRun(backend: Backend): Promise<void> {
  const fake = await startFakeUpstream();
  const directory = await mkdtemp(join(tmpdir(), 'gateway-fix-recovery-'));
  const { store, env, databasePath, drop } = await backend.open(directory);
  const configPath = join(directory, 'gateway.yaml');
  await writeFile(configPath, `${harnessConfigText(fake.url, databasePath, 30_000)}\nlimits: { hold_ttl_seconds: 5 }\n`);
  await store.migrate();
  await store.addFunds(DEFAULT_ACCOUNT_ID, 5 * NANO_PER_USD, 'test');
  const { key } = await issueApiKey(store, { name: 'fix', scopes: ['fix'] });
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

  const [doomed, survivor] = await Promise.all([startGatewayProcess(configPath, env), startGatewayProcess(configPath, env)]);
  try {
    // The first call never answers: the run is mid-step when its process dies.
    fake.script('alpha', { hang: true });
    const quote = await (
      await fetch(`${doomed.url}/v1/fix/quote`, { method: 'POST', headers, body: JSON.stringify({ agent: 'code-fix', tier: 'fast', ...FIX_INPUT }) })
    ).json();
    const started = await fetch(`${doomed.url}/v1/fix/runs`, { method: 'POST', headers, body: JSON.stringify({ quote: quote.id, stream: true }) });
    const runId = started.headers.get('x-svc-run-id')!;
    let stepStarted!: () => void;
    const stepStartedSeen = new Promise<void>((resolve) => (stepStarted = resolve));
    const doomedEvents = readEvents(started, (event) => event.event === 'step.started' && stepStarted()).catch(() => []);
    await stepStartedSeen;

    // Another process follows the same run: it replays what happened so far and waits for the rest.
    const followed = await fetch(`${survivor.url}/v1/fix/runs/${runId}/events`, { headers });
    assert.equal(followed.status, 200);
    const survivorEvents = readEvents(followed, () => {});
    const [hold] = await store.listHolds(DEFAULT_ACCOUNT_ID);
    assert.equal(hold?.amountNano, parseUsd(quote.max_cost), 'the quote maximum is held');

    await doomed.stop('SIGKILL');
    await doomedEvents;

    // The survivor's hold keeper sees the dead owner, releases its hold and ends the run failed.
    const events = await survivorEvents;
    assert.deepEqual(
      events.slice(0, 2).map((event) => event.event),
      ['run.started', 'step.started'],
    );
    const last = JSON.parse(events.at(-1)!.data);
    assert.equal(last.type, 'run.completed');
    // Its first step's prompt was sent: charged as a chat request whose process died (orphan-receipt.ts).
    const estimate = hold!.estimatedCostNano!;
    assert.ok(estimate > 0 && estimate < hold!.amountNano, 'the hold carries the first prompt at the first candidate price');
    assert.deepEqual([last.run.id, last.run.status, last.run.error.code, last.run.cost], [runId, 'failed', 'internal_error', formatUsd(estimate)]);

    const view = await (await fetch(`${survivor.url}/v1/fix/runs/${runId}`, { headers })).json();
    assert.equal(view.status, 'failed');
    assert.deepEqual(await store.listHolds(DEFAULT_ACCOUNT_ID), [], 'hold released');
    const receipt = await store.getReceipt(DEFAULT_ACCOUNT_ID, view.receipt_id);
    assert.deepEqual([receipt?.status, receipt?.costNano, receipt?.usageEstimated, receipt?.endpoint], ['failed', estimate, true, 'fix.runs']);
    assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 5 * NANO_PER_USD - estimate, 'the prompt sent is charged, nothing more');

    // The quote ran once: posting it again returns the failed run, never a second hold.
    const again = await (await fetch(`${survivor.url}/v1/fix/runs`, { method: 'POST', headers, body: JSON.stringify({ quote: quote.id }) })).json();
    assert.deepEqual([again.id, again.status], [runId, 'failed']);

    // The survivor runs new quotes as usual.
    fake.reset();
    fake.script('alpha', { text: GOOD_EDIT });
    const next = await (
      await fetch(`${survivor.url}/v1/fix/quote`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ agent: 'code-fix', tier: 'fast', ...FIX_INPUT }),
      })
    ).json();
    const ran = await (await fetch(`${survivor.url}/v1/fix/runs`, { method: 'POST', headers, body: JSON.stringify({ quote: next.id }) })).json();
    assert.equal(ran.status, 'succeeded');
  } finally {
    await doomed.stop('SIGKILL');
    await survivor.stop();
    await store.close();
    await fake.close();
    await drop();
    await rm(directory, { recursive: true, force: true });
  }
}

describe('a gateway process killed mid-run', () => {
  test('SQLite: the run ends failed, its hold released, followed to the end from another process', () => gatewayKilledMidRun(sqlite));
});

const missing = await postgresUnreachable();
if (missing !== null) reportPostgresUnreachable('a gateway process killed mid-run: PostgreSQL', missing);
else
  test('PostgreSQL: a gateway process killed mid-run: the run ends failed, its hold released, followed to the end from another process', () =>
    gatewayKilledMidRun(postgres));
