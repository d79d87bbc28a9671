import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { issueApiKey } from '../src/auth/issue-api-key.ts';
import { NANO_PER_USD } from '../src/lib/money.ts';
import { createSqliteStore } from '../src/storage/sqlite/sqlite-store.ts';
import { DEFAULT_ACCOUNT_ID } from '../src/storage/store.ts';
import { startFakeUpstream } from './fake-upstream/fake-upstream.ts';
import { harnessConfigText, startHarness, UPSTREAM_OPENAI_KEY } from './helpers/gateway-harness.ts';
import { startGatewayProcess } from './helpers/gateway-process.ts';

/** A logger whose JSON lines land in `lines`. */
function capturingLogger(lines: Array<Record<string, unknown>>): FastifyBaseLogger {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return pino({ level: 'info' }, sink) as unknown as FastifyBaseLogger;
}

const PROMPT = 'the secret plan is in the prompt';

describe('one structured log line per request', () => {
  test('model requests log their receipt in short, other requests what was answered; never a key, prompt or secret', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const harness = await startHarness({ logger: capturingLogger(lines) });
    try {
      harness.fake.script('alpha', { text: 'ok', usage: { prompt: 10, completion: 2 } });
      const chat = await harness.post('/v1/chat/completions', { model: 'svc/fast', messages: [{ role: 'user', content: PROMPT }] });
      assert.equal(chat.status, 200);
      assert.equal((await harness.get('/v1/models')).status, 200);
      assert.equal((await harness.get('/v1/models', 'svc_not_a_key')).status, 401);
      await new Promise((resolve) => setTimeout(resolve, 50));

      const requests = lines.filter((line) => line.msg === 'request');
      assert.equal(requests.length, 3, JSON.stringify(requests));
      const model = requests.find((line) => line.endpoint === 'chat.completions')!;
      assert.equal(model.level, 30, 'info');
      assert.equal(model.request_id, chat.headers.get('x-svc-request-id'));
      assert.equal(model.receipt_id, chat.headers.get('x-svc-receipt-id'));
      assert.deepEqual([model.requested_model, model.model, model.status, model.error_code], ['svc/fast', 'up/alpha', 'succeeded', null]);
      assert.match(String(model.key_prefix), /^svc_/);
      assert.match(String(model.cost), /^\d+\.\d{9}$/);
      assert.ok(typeof model.duration_ms === 'number' && typeof model.ttft_ms === 'number');
      const refused = requests.find((line) => line.status === 401)!;
      assert.deepEqual([refused.route, refused.key_prefix], ['/v1/models', null]);

      const text = JSON.stringify(lines);
      for (const secret of [harness.key, PROMPT, UPSTREAM_OPENAI_KEY, 'svc_not_a_key']) assert.ok(!text.includes(secret), `the log holds ${secret}`);
    } finally {
      await harness.close();
    }
  });

  test('logging.requests: false turns the lines off', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const harness = await startHarness({
      logger: capturingLogger(lines),
      editConfig: (text) => text.replace('providers:', 'logging: { requests: false }\nproviders:'),
    });
    try {
      assert.equal((await harness.post('/v1/chat/completions', { model: 'up/alpha', messages: [{ role: 'user', content: 'hi' }] })).status, 200);
      assert.equal((await harness.get('/v1/models')).status, 200);
      assert.equal(lines.filter((line) => line.msg === 'request').length, 0);
    } finally {
      await harness.close();
    }
  });
});

describe('the request log of a gateway process', () => {
  // Lines are gathered, then written through the thread pool to a pipe, on the event loop to a file (metrics/log-destination.ts).
  for (const into of ['a pipe', 'a file'] as const)
    test(`standard output into ${into} carries one whole line per request under load, and every line is out when the process stops`, () =>
      logsEveryRequest(into));
});

/** 200 requests, 50 at a time, then SIGTERM: exactly one whole JSON line per receipt, and 'shut down' last. */
async function logsEveryRequest(into: 'a pipe' | 'a file'): Promise<void> {
  const fake = await startFakeUpstream();
  const directory = await mkdtemp(join(tmpdir(), 'gateway-log-'));
  try {
    const databasePath = join(directory, 'gateway.db');
    const configPath = join(directory, 'gateway.yaml');
    await writeFile(configPath, harnessConfigText(fake.url, databasePath));
    const store = createSqliteStore(databasePath);
    await store.migrate();
    await store.addFunds(DEFAULT_ACCOUNT_ID, 5 * NANO_PER_USD, 'test');
    const { key } = await issueApiKey(store, { name: 'log', rateLimitPerMinute: 1_000_000 });
    await store.close();
    const gateway = await startGatewayProcess(configPath, {}, into === 'a file' ? { stdoutFile: join(directory, 'gateway.log') } : {});
    const receiptIds = new Set<string>();
    try {
      // Lines written while others are on their way go out together: many requests at once.
      for (let round = 0; round < 4; round++) {
        const answers = await Promise.all(
          Array.from({ length: 50 }, () =>
            fetch(`${gateway.url}/v1/chat/completions`, {
              method: 'POST',
              headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
              body: JSON.stringify({ model: 'up/alpha', messages: [{ role: 'user', content: 'hi' }] }),
            }),
          ),
        );
        for (const answer of answers) {
          assert.equal(answer.status, 200);
          receiptIds.add(answer.headers.get('x-svc-receipt-id')!);
          await answer.arrayBuffer();
        }
        // Gathered lines are not held until the process stops: out within a moment of the answers.
        // 10 s: far above the 100 ms a line may wait to be gathered, so a loaded machine does not fail it.
        const deadline = Date.now() + 10_000;
        while ([...receiptIds].some((id) => !gateway.output().includes(id))) {
          assert.ok(Date.now() < deadline, `round ${round}: lines still held 10 s after the answers`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    } finally {
      // The process exits as soon as it has closed: whatever it still held for standard output goes out first.
      assert.equal((await gateway.stop()).code, 0);
    }
    const lines = gateway.output().split('\n').filter(Boolean);
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const logged = parsed.filter((line) => line.msg === 'request').map((line) => line.receipt_id);
    assert.equal(logged.length, 200);
    assert.deepEqual(new Set(logged), receiptIds);
    assert.equal(parsed.at(-1)!.msg, 'shut down');
  } finally {
    await fake.close();
    await rm(directory, { recursive: true, force: true });
  }
}
