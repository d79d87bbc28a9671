import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type BatchedWrite, PostgresGroupCommit } from './postgres-group-commit.ts';
import { statements } from './statements.ts';

function write(op: string, index: number): BatchedWrite<number> {
  return {
    json: { op, id: `rcpt_${index}` },
    fromBatch: (result) => Number(result.index),
    alone: async () => -index,
    flushLater: op === 'receipt',
  };
}

/** A group commit whose batches are recorded, each answered with the index of its writes. */
function recording() {
  const sent: Array<{ flushLater: boolean; ops: Array<Record<string, unknown>> }> = [];
  const commit = new PostgresGroupCommit(async (ops, flushLater) => {
    sent.push({ flushLater, ops });
    return ops.map((op) => ({ index: Number(String(op.id).slice('rcpt_'.length)) }));
  });
  return { commit, sent };
}

test('a batch of settlements only commits without waiting for the flush', async () => {
  const { commit, sent } = recording();
  const results = await Promise.all([0, 1, 2].map((index) => commit.run(write('receipt', index))));
  assert.deepEqual(results, [0, 1, 2]);
  assert.equal(sent.length, 1);
  assert.equal(sent[0]!.flushLater, true);
  assert.deepEqual(commit.stats, { batches: 1, writes: 3, fallbacks: 0 });
});

test('a batch with a hold in it waits for the flush', async () => {
  const { commit, sent } = recording();
  const results = await Promise.all([commit.run(write('receipt', 0)), commit.run(write('lease_hold', 1)), commit.run(write('receipt', 2))]);
  assert.deepEqual(results, [0, 1, 2]);
  assert.equal(sent.length, 1);
  assert.equal(sent[0]!.flushLater, false);
});

test('a write alone runs its own statement, not a batch', async () => {
  const { commit, sent } = recording();
  assert.equal(await commit.run(write('receipt', 7)), -7);
  assert.equal(sent.length, 0);
});

test("a batch's JSON carries a NUL as U+FFFD (jsonb refuses it), text that spells out its escape as it is", () => {
  const details = ['bad\0byte', 'a \\u0000 b', 'plain'];
  const statement = statements.applyBatch(details.map((detail, index) => ({ op: 'receipt', id: `rcpt_${index}`, attempts: [{ detail }] })));
  assert.equal(statement.text, 'SELECT gateway_apply_batch($1::jsonb) AS results');
  const ops = JSON.parse(String(statement.values![0])) as Array<{ attempts: Array<{ detail: string }> }>;
  assert.deepEqual(
    ops.map((op) => op.attempts[0]!.detail),
    ['bad\uFFFDbyte', 'a \\u0000 b', 'plain'],
  );
});
