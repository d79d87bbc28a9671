import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { connectTestRedis, REDIS_TEST_URL, reportRedisUnreachable, uniqueTestPrefix } from '../../test/helpers/redis-test-connection.ts';
import { COOL_DOWNS_KEY, redisCoolDownBoard } from './redis-cool-down-board.ts';
import { ModelHealth } from './model-health.ts';

const connection = await connectTestRedis();

if (!(connection instanceof Redis)) {
  reportRedisUnreachable('cool-downs shared through Redis', connection.unreachable);
} else {
  const redis = connection;
  // A second connection and board stand for a second gateway process.
  const other = new Redis(REDIS_TEST_URL, { maxRetriesPerRequest: 0 });
  const model = `${uniqueTestPrefix()}model`;
  const boards = [redisCoolDownBoard(redis, { pollMs: 50 }), redisCoolDownBoard(other, { pollMs: 50 })];
  const [first, second] = boards.map((board) => new ModelHealth({ board, failuresToCool: 5, coolDownMs: 300 })) as [ModelHealth, ModelHealth];

  after(async () => {
    await redis.hdel(COOL_DOWNS_KEY, model);
    for (const board of boards) board.close();
    other.disconnect();
    redis.disconnect();
  });

  test('a model one process cooled down is skipped by another; one probe among them restores it for both', async () => {
    for (let index = 0; index < 5; index++) first.failed(model, 'unavailable');
    assert.equal((await first.admit(model)).call, false, 'at once in the process that saw the failures');
    await sleep(150);
    const seen = await second.admit(model);
    assert.ok(!seen.call && /5 consecutive failures/.test(seen.reason), 'the other process skips it within a poll');

    await sleep(300);
    const admissions = await Promise.all([first.admit(model), second.admit(model), first.admit(model), second.admit(model)]);
    assert.equal(admissions.filter((admission) => admission.call).length, 1, 'exactly one probe across both processes');
    const prober = admissions[0]!.call || admissions[2]!.call ? first : second;
    prober.succeeded(model);
    await sleep(150);
    assert.deepEqual(await first.admit(model), { call: true, probe: false });
    assert.deepEqual(await second.admit(model), { call: true, probe: false });
    assert.equal(await redis.hexists(COOL_DOWNS_KEY, model), 0);
  });
}
