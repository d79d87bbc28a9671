import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ReceiptRecord } from '../records.ts';
import { receiptFromSqlite, receiptToSqlite } from './sqlite-rows.ts';

const receipt: ReceiptRecord = {
  id: 'rcpt_1',
  requestId: 'req_1',
  accountId: 'acct_1',
  keyId: 'key_1',
  keyPrefix: 'svc_Ab12Cd34',
  createdAt: '2026-11-21T10:00:00.000Z',
  status: 'failed',
  endpoint: '/v1/chat/completions',
  stream: true,
  requestedModel: 'svc/fast',
  answeringModel: null,
  attempts: [{ model: 'a/one', outcome: 'failed', errorCode: 'provider_timeout', latencyMs: 12 }],
  warnings: [],
  usage: null,
  usageEstimated: false,
  prices: null,
  holdNano: 5,
  costNano: 0,
  latencyMs: 20,
  timeToFirstTokenMs: null,
  errorCode: 'provider_timeout',
};

test('SQLite keeps JSON as text and booleans as 0/1, and gives the same record back', () => {
  const stored = receiptToSqlite(receipt);
  assert.equal(stored.attempts, JSON.stringify(receipt.attempts));
  assert.equal(stored.usage, null);
  assert.equal(stored.stream, 1);
  assert.equal(stored.usage_estimated, 0);
  assert.equal(stored.created_ns, '1795255200000000000');
  assert.deepEqual(receiptFromSqlite(stored), { ...receipt, createdAt: '2026-11-21T10:00:00.000000000Z' }, 'created_at read back from created_ns');
});
