import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { startHarness, UPSTREAM_OPENAI_KEY } from './helpers/gateway-harness.ts';

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
