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

/** Resolves once `harness`'s gateway mirrors a cool-down of `model` that `wanted` accepts. */
async function announced(harness: Harness, model: string, wanted: (cool: { until: number; reason: string } | undefined) => boolean) {
  const board = harness.gateway.deps.health.board;
  for (let waited = 0; !wanted(board.current(model)); waited += 10) {
    if (waited > 5_000) assert.fail(`not announced to the other process: ${JSON.stringify(board.current(model))}`);
    await sleep(10);
  }
  return board.current(model)!;
}

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

  test('five failures in one process: the other is told at once (nothing polls) and skips the model without calling it', async () => {
    first.fake.script('alpha', ...Array.from({ length: 5 }, () => ({ status: 500 })));
    for (let index = 0; index < 5; index++) {
      await first.post('/v1/chat/completions', { model: 'svc/fast', messages: [{ role: 'user', content: 'hi' }] });
    }
    await announced(second, model, (cool) => cool !== undefined);
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

describe('with Redis, a failed probe in one process: both skip the model for the new cool-down only, then the other probes it', async () => {
  const { connectTestRedis, reportRedisUnreachable, REDIS_TEST_URL } = await import('./helpers/redis-test-connection.ts');
  const { Redis } = await import('ioredis');
  const { COOL_DOWNS_KEY } = await import('../src/routing/redis-cool-down-board.ts');
  const connection = await connectTestRedis();
  if (!(connection instanceof Redis)) {
    reportRedisUnreachable('provider health through Redis', connection.unreachable);
    return;
  }
  const model = `up/alpha-probe-${process.pid}-${Date.now().toString(36)}`;
  const config = (text: string) => withHealth(text).replaceAll('up/alpha', model);
  let first: Harness;
  let second: Harness;
  const redisUrl = process.env.REDIS_URL;
  before(async () => {
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

  const ask = (harness: Harness) => harness.post('/v1/chat/completions', { model: 'svc/fast', messages: [{ role: 'user', content: 'hi' }] });
  const attemptsOf = async (harness: Harness, response: Response) =>
    (
      (await (await harness.get(`/v1/receipts/${response.headers.get('x-svc-receipt-id')}`)).json()) as {
        attempts: Array<{ model: string; outcome: string; detail?: string }>;
      }
    ).attempts;

  test('the probe claim goes with the failed probe; receipts never say a probe runs when none does', async () => {
    first.fake.script('alpha', ...Array.from({ length: 6 }, () => ({ status: 500 })));
    for (let index = 0; index < 5; index++) await ask(first);
    const cooled = await announced(second, model, (cool) => cool !== undefined);
    // health.cool_down_seconds: 1, exactly.
    await sleep(cooled.until - Date.now() + 20);
    const probe = await ask(first);
    assert.deepEqual(
      (await attemptsOf(first, probe)).map((attempt) => [attempt.model, attempt.outcome]),
      [
        [model, 'failed'],
        ['up/beta', 'succeeded'],
      ],
    );
    const again = await announced(second, model, (cool) => /its probe failed/.test(cool?.reason ?? ''));
    const skipped = (await attemptsOf(second, await ask(second)))[0]!;
    assert.equal(skipped.outcome, 'skipped');
    assert.match(skipped.detail!, /cooling down \(its probe failed: unavailable\)/);
    assert.doesNotMatch(skipped.detail!, /a probe request is testing it/);
    // Twice the cool-down, then the other process probes at once: its upstream answers and restores the model.
    await sleep(again.until - Date.now() + 20);
    const restored = await ask(second);
    assert.equal(restored.headers.get('x-svc-model'), model);
    await announced(first, model, (cool) => cool === undefined);
    assert.equal((await ask(first)).headers.get('x-svc-model'), model);
  });
});
