import assert from 'node:assert/strict';
import { test } from 'node:test';
import { touchEachKeyOnce } from './postgres-group-commit.ts';

test("in a batch, only each key's latest receipt marks the key used; everything else is sent as it was", () => {
  const receipt = (id: string, key: string, at: string, touch = true) => ({ op: 'receipt', id, key_id: key, created_at: at, touch_key: touch });
  const hold = { op: 'hold', id: 'hold_1', key_id: 'key_a' };
  const ops: Array<Record<string, unknown>> = [
    receipt('r1', 'key_a', '2026-11-24T12:00:00.002Z'),
    hold,
    receipt('r2', 'key_b', '2026-11-24T12:00:00.001Z'),
    receipt('r3', 'key_a', '2026-11-24T12:00:00.003Z'),
    receipt('r4', 'key_a', '2026-11-24T12:00:00.001Z'),
    receipt('r5', 'key_b', '2026-11-24T12:00:00.009Z', false),
  ];
  const sent = touchEachKeyOnce(ops);
  assert.deepEqual(
    sent.map((op) => [op.id, op.touch_key]),
    [
      ['r1', false],
      ['hold_1', undefined],
      ['r2', true],
      ['r3', true],
      ['r4', false],
      ['r5', false],
    ],
  );
  assert.equal(sent[1], hold, 'untouched operations are the same objects');
  assert.equal(ops[0]!.touch_key, true, 'the queued operation itself is left as it was, for running alone');
});
