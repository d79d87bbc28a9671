import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KeyTouches, TOUCH_INTERVAL_MS } from './key-touches.ts';

test('a key is marked used by its first receipt, then once per interval, never by an older receipt', () => {
  const touches = new KeyTouches();
  const at = (ms: number) => new Date(Date.UTC(2026, 10, 24) + ms).toISOString();
  assert.equal(touches.claim('key_a', at(1_000)), true, 'the first');
  // Receipts settling together (50 requests in flight, started in any order): none marks it again.
  for (const ms of [900, 1_000, 1_001, 1_000 + TOUCH_INTERVAL_MS - 1]) assert.equal(touches.claim('key_a', at(ms)), false, `at ${ms}`);
  assert.equal(touches.claim('key_b', at(1_001)), true, 'each key its own');
  assert.equal(touches.claim('key_a', at(1_000 + TOUCH_INTERVAL_MS)), true, 'an interval later');
  assert.equal(touches.claim('key_a', at(1_000 + TOUCH_INTERVAL_MS + 10)), false);
});
