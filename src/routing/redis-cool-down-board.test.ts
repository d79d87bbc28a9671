import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { connectTestRedis, REDIS_TEST_URL, reportRedisUnreachable, uniqueTestPrefix } from '../../test/helpers/redis-test-connection.ts';
import { COOL_DOWNS_KEY, redisCoolDownBoard } from './redis-cool-down-board.ts';
import type { CoolDownBoard } from './cool-down-board.ts';
import { ModelHealth } from './model-health.ts';

const connection = await connectTestRedis();

/** Resolves once `board` mirrors what `wanted` says (nothing polls: only an announcement changes it). */
async function seen(board: CoolDownBoard, modelId: string, wanted: (cool: ReturnType<CoolDownBoard['current']>) => boolean): Promise<void> {
  for (let waited = 0; !wanted(board.current(modelId)); waited += 10) {
    if (waited > 5_000) assert.fail(`not announced: ${JSON.stringify(board.current(modelId))}`);
    await sleep(10);
  }
}

if (!(connection instanceof Redis)) {
  reportRedisUnreachable('cool-downs shared through Redis', connection.unreachable);
} else {
  const redis = connection;
  // A second connection and board stand for a second gateway process.
  const other = new Redis(REDIS_TEST_URL, { maxRetriesPerRequest: 0 });
  const models: string[] = [];
  const boards: CoolDownBoard[] = [];
  const pair = (coolDownMs: number) => {
    const model = `${uniqueTestPrefix()}model`;
    models.push(model);
    const made = [redisCoolDownBoard(redis), redisCoolDownBoard(other)];
    boards.push(...made);
    const [first, second] = made.map((board) => new ModelHealth({ board, failuresToCool: 5, coolDownMs })) as [ModelHealth, ModelHealth];
    return { model, first, second, boards: made as [CoolDownBoard, CoolDownBoard] };
  };

  after(async () => {
    await redis.hdel(COOL_DOWNS_KEY, ...models);
    for (const board of boards) board.close();
    other.disconnect();
    redis.disconnect();
  });

  test('a model one process cooled down is skipped by another as soon as it is announced; one probe among them restores it for both', async () => {
    const { model, first, second, boards } = pair(300);
    await sleep(100); // both subscribed
    for (let index = 0; index < 5; index++) first.failed(model, 'unavailable');
    assert.equal((await first.admit(model)).call, false, 'at once in the process that saw the failures');
    await seen(boards[1], model, (cool) => cool !== undefined);
    const skipped = await second.admit(model);
    assert.ok(!skipped.call && /5 consecutive failures/.test(skipped.reason), 'the other process skips it');

    await sleep(300);
    const admissions = await Promise.all([first.admit(model), second.admit(model), first.admit(model), second.admit(model)]);
    assert.equal(admissions.filter((admission) => admission.call).length, 1, 'exactly one probe across both processes');
    const prober = admissions[0]!.call || admissions[2]!.call ? first : second;
    prober.succeeded(model);
    await seen(boards[0], model, (cool) => cool === undefined);
    await seen(boards[1], model, (cool) => cool === undefined);
    assert.deepEqual(await first.admit(model), { call: true, probe: false });
    assert.deepEqual(await second.admit(model), { call: true, probe: false });
    assert.equal(await redis.hexists(COOL_DOWNS_KEY, model), 0);
  });

  test('a failed probe cools the model again in both processes and frees the claim: the next probe comes when that cool-down ends', async () => {
    const { model, first, second, boards } = pair(200);
    await sleep(100);
    for (let index = 0; index < 5; index++) first.failed(model, 'timeout');
    await seen(boards[1], model, (cool) => cool !== undefined);
    await sleep(200);
    assert.deepEqual(await first.admit(model), { call: true, probe: true });
    first.failed(model, 'timeout');
    await seen(boards[1], model, (cool) => /probe failed/.test(cool?.reason ?? ''));
    const cooling = await second.admit(model);
    assert.ok(!cooling.call && /its probe failed: timeout/.test(cooling.reason), 'the other process says why, not that a probe runs');
    // Twice the first cool-down, then the other process probes: the claim of the failed probe is gone.
    await sleep(cooling.until - Date.now() + 10);
    assert.deepEqual(await second.admit(model), { call: true, probe: true });
    second.succeeded(model);
    await seen(boards[0], model, (cool) => cool === undefined);
  });

  test('a probe refused because another process cooled the model again says so, from the shared hash', async () => {
    const { model, second, boards } = pair(100);
    // Written behind the board's back: an ended cool-down this process mirrors, a newer one in Redis only.
    const ended = { until: Date.now() - 1, reason: 'old' };
    await redis.hset(COOL_DOWNS_KEY, model, JSON.stringify({ until: Date.now() + 60_000, reason: 'cooled elsewhere' }));
    boards[1].coolDown(model, ended);
    await redis.hset(COOL_DOWNS_KEY, model, JSON.stringify({ until: Date.now() + 60_000, reason: 'cooled elsewhere' }));
    const refused = await second.admit(model);
    assert.ok(!refused.call && refused.reason === 'cooling down (cooled elsewhere)', JSON.stringify(refused));
  });
}
