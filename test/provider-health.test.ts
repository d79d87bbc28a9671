import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';

/** A short cool-down, so the probe comes within the test. */
const withHealth = (text: string) => text.replace('providers:', 'health: { failures_to_cool: 5, cool_down_seconds: 1 }\nproviders:');

describe('provider health: a failing candidate is cooled down, skipped, probed and restored', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness({ editConfig: withHealth });
  });
  after(() => harness.close());
  beforeEach(() => harness.fake.reset());

  const ask = (model = 'svc/fast') => harness.post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }] });
  const receiptOf = async (response: Response) => (await harness.get(`/v1/receipts/${response.headers.get('x-svc-receipt-id')}`)).json();
  const upstreamCalls = (model: string) => harness.fake.requests.filter((request) => (request.body as { model?: string }).model === model).length;

  test('five failures cool a candidate down: skipped with the reason, then one probe restores it', async () => {
    harness.fake.script('alpha', ...Array.from({ length: 5 }, () => ({ status: 500 })));
    for (let index = 0; index < 5; index++) {
      const response = await ask();
      assert.equal(response.status, 200, 'svc/fast falls back to up/beta');
      assert.equal(response.headers.get('x-svc-model'), 'up/beta');
    }
    assert.equal(upstreamCalls('alpha'), 5);

    const skipping = await ask();
    assert.equal(skipping.status, 200);
    assert.equal(upstreamCalls('alpha'), 5, 'no call to the cooled-down model');
    const receipt = await receiptOf(skipping);
    assert.deepEqual(
      receipt.attempts.map((attempt: { model: string; outcome: string }) => [attempt.model, attempt.outcome]),
      [
        ['up/alpha', 'skipped'],
        ['up/beta', 'succeeded'],
      ],
    );
    assert.equal(receipt.attempts[0].error_code, 'provider_unavailable');
    assert.match(receipt.attempts[0].detail, /cooling down \(5 consecutive failures, the last unavailable\); skipped until \d{4}-/);

    // Alone, it answers at once: provider_unavailable with when to come back, no provider call.
    const direct = await ask('up/alpha');
    assert.equal(direct.status, 503);
    assert.equal(((await direct.json()) as { error: { code: string } }).error.code, 'provider_unavailable');
    assert.ok(Number(direct.headers.get('retry-after')) >= 1);
    const agents = (await (await harness.get('/v1/fix/agents')).json()) as {
      data: Array<{ tiers: Array<{ tier: string; connected_models: string[] }> }>;
    };
    assert.deepEqual(agents.data[0]!.tiers.find((tier) => tier.tier === 'fast')!.connected_models, ['up/beta']);

    await sleep(1_100);
    const probe = await ask();
    assert.equal(probe.headers.get('x-svc-model'), 'up/alpha', 'the probe went to up/alpha, which answers again');
    assert.equal((await ask()).headers.get('x-svc-model'), 'up/alpha', 'restored');
    assert.equal(upstreamCalls('alpha'), 7);
  });

  test("a provider's retry-after is honoured: the candidate is skipped until then", async () => {
    harness.fake.script('alpha', { status: 429, headers: { 'retry-after': '2' } });
    assert.equal((await ask()).headers.get('x-svc-model'), 'up/beta');
    const skipping = await ask();
    assert.equal(skipping.headers.get('x-svc-model'), 'up/beta');
    const receipt = await receiptOf(skipping);
    assert.match(receipt.attempts[0].detail, /the provider asked to retry after 2 s/);
    assert.equal(upstreamCalls('alpha'), 1);
  });
});

describe('with Redis, a cool-down one gateway process saw is honoured by another', async () => {
  const { connectTestRedis, reportRedisUnreachable, REDIS_TEST_URL } = await import('./helpers/redis-test-connection.ts');
  const { Redis } = await import('ioredis');
  const { COOL_DOWNS_KEY } = await import('../src/routing/redis-cool-down-board.ts');
  const connection = await connectTestRedis();
  if (!(connection instanceof Redis)) {
    reportRedisUnreachable('provider health through Redis', connection.unreachable);
    return;
  }
  // A model id of this run only: other suites share the Redis server.
  const model = `up/alpha-${process.pid}-${Date.now().toString(36)}`;
  // The default cool-down (30 s) outlasts the test.
  const config = (text: string) => text.replaceAll('up/alpha', model);
  let first: Harness;
  let second: Harness;
  const redisUrl = process.env.REDIS_URL;
  before(async () => {
    // Gateways read REDIS_URL when they open their shared state.
    process.env.REDIS_URL = REDIS_TEST_URL;
    try {
      first = await startHarness({ editConfig: config });
      second = await startHarness({ editConfig: config });
    } finally {
      if (redisUrl === undefined) delete process.env.REDIS_URL;
      else process.env.REDIS_URL = redisUrl;
    }
  });
  after(async () => {
    await first?.close();
    await second?.close();
    await connection.hdel(COOL_DOWNS_KEY, model);
    connection.disconnect();
  });

  test('five failures in one process: the other skips the model within a second, without calling it', async () => {
    first.fake.script('alpha', ...Array.from({ length: 5 }, () => ({ status: 500 })));
    for (let index = 0; index < 5; index++) {
      await first.post('/v1/chat/completions', { model: 'svc/fast', messages: [{ role: 'user', content: 'hi' }] });
    }
    await sleep(1_200);
    const response = await second.post('/v1/chat/completions', { model: 'svc/fast', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(response.headers.get('x-svc-model'), 'up/beta');
    const receipt = (await (await second.get(`/v1/receipts/${response.headers.get('x-svc-receipt-id')}`)).json()) as {
      attempts: Array<{ model: string; outcome: string; detail: string }>;
    };
    assert.deepEqual([receipt.attempts[0]!.model, receipt.attempts[0]!.outcome], [model, 'skipped']);
    assert.match(receipt.attempts[0]!.detail, /5 consecutive failures/);
    assert.equal(second.fake.requests.filter((request) => (request.body as { model?: string }).model === 'alpha').length, 0);
  });
});
