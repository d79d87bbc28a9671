import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ModelHealth } from './model-health.ts';
import { localCoolDownBoard } from './cool-down-board.ts';

function healthAt(start = 1_000_000, coolDownMs = 30_000) {
  const clock = { now: start };
  const now = () => clock.now;
  const health = new ModelHealth({
    now,
    failuresToCool: 5,
    coolDownMs,
    maxCoolDownMs: 100_000,
    probeMs: 60_000,
    board: localCoolDownBoard(now),
  });
  return { health, clock };
}

test('five consecutive failures of its own cool a model down; routing is told why and until when', async () => {
  const { health, clock } = healthAt();
  for (let index = 0; index < 4; index++) health.failed('m', 'timeout');
  assert.deepEqual(await health.admit('m'), { call: true, probe: false });
  health.failed('m', 'unavailable');
  const refused = await health.admit('m');
  assert.equal(refused.call, false);
  assert.ok(!refused.call && refused.until === clock.now + 30_000 && /5 consecutive failures, the last unavailable/.test(refused.reason));
  assert.equal(health.isDown('m'), true);
  assert.deepEqual(
    health.states(['m', 'other']).map((state) => state.state),
    ['cooling', 'up'],
  );
});

test('a success in between starts the count again; a rejected request says nothing about the model', async () => {
  const { health } = healthAt();
  for (let index = 0; index < 4; index++) health.failed('m', 'rate_limited');
  health.succeeded('m');
  for (let index = 0; index < 4; index++) health.failed('m', 'timeout');
  for (let index = 0; index < 10; index++) health.failed('m', 'bad_request');
  assert.deepEqual(await health.admit('m'), { call: true, probe: false });
});

test('after the cool-down, exactly one probe; its success restores the model', async () => {
  const { health, clock } = healthAt();
  for (let index = 0; index < 5; index++) health.failed('m', 'timeout');
  clock.now += 30_000;
  assert.deepEqual(await health.admit('m'), { call: true, probe: true });
  const second = await health.admit('m');
  assert.ok(!second.call && /probe/.test(second.reason), 'others skip it while the probe runs');
  assert.deepEqual(health.states(['m'])[0]!.state, 'probing');
  health.succeeded('m');
  assert.deepEqual(await health.admit('m'), { call: true, probe: false });
  assert.equal(health.isDown('m'), false);
});

test('a failed probe cools the model again, twice as long each time, up to the maximum', async () => {
  const { health, clock } = healthAt();
  for (let index = 0; index < 5; index++) health.failed('m', 'timeout');
  const lengths: number[] = [];
  for (let round = 0; round < 3; round++) {
    const cooling = await health.admit('m');
    assert.ok(!cooling.call);
    clock.now = cooling.until;
    assert.deepEqual(await health.admit('m'), { call: true, probe: true });
    health.failed('m', 'timeout');
    const next = await health.admit('m');
    assert.ok(!next.call && /probe failed/.test(next.reason));
    lengths.push(next.until - clock.now);
  }
  assert.deepEqual(lengths, [60_000, 100_000, 100_000]);
});

test("a provider's retry-after cools the model at once, for at least that long", async () => {
  const { health, clock } = healthAt();
  health.failed('m', 'rate_limited', 7);
  const refused = await health.admit('m');
  assert.ok(!refused.call && refused.until === clock.now + 7_000 && /retry after 7 s/.test(refused.reason));
});

test('a probe that never reports back frees the slot after the probe time', async () => {
  const { health, clock } = healthAt();
  for (let index = 0; index < 5; index++) health.failed('m', 'timeout');
  clock.now += 30_000;
  assert.equal((await health.admit('m')).call, true);
  clock.now += 60_000;
  assert.deepEqual(await health.admit('m'), { call: true, probe: true });
});

test('a failed probe frees its claim: the next probe comes when the new cool-down ends, not after the probe time', async () => {
  const { health, clock } = healthAt(1_000_000, 5_000);
  for (let index = 0; index < 5; index++) health.failed('m', 'timeout');
  clock.now += 5_000;
  assert.deepEqual(await health.admit('m'), { call: true, probe: true });
  health.failed('m', 'unavailable');
  const cooling = await health.admit('m');
  assert.ok(!cooling.call && cooling.until === clock.now + 10_000 && cooling.reason === 'cooling down (its probe failed: unavailable)');
  clock.now = cooling.until;
  assert.deepEqual(await health.admit('m'), { call: true, probe: true });
});

test('a probe that ends saying nothing about the model (the client left, a refused request) frees the claim at once', async () => {
  const { health, clock } = healthAt();
  for (let index = 0; index < 5; index++) health.failed('m', 'timeout');
  clock.now += 30_000;
  assert.deepEqual(await health.admit('m'), { call: true, probe: true });
  health.probeEnded('m');
  assert.deepEqual(await health.admit('m'), { call: true, probe: true }, 'no request is told a probe is testing it');
  health.failed('m', 'bad_request');
  assert.deepEqual(await health.admit('m'), { call: true, probe: true });
  assert.deepEqual(health.states(['m'])[0]!.state, 'probing');
});

test('a cool-down lasts exactly the configured time', async () => {
  const { health, clock } = healthAt();
  for (let index = 0; index < 5; index++) health.failed('m', 'timeout');
  clock.now += 29_999;
  assert.equal((await health.admit('m')).call, false);
  clock.now += 1;
  assert.deepEqual(await health.admit('m'), { call: true, probe: true });
});
