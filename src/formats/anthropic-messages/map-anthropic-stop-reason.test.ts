import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mapAnthropicStopReason } from './map-anthropic-stop-reason.ts';

test('maps every documented stop reason', () => {
  assert.equal(mapAnthropicStopReason('end_turn'), 'stop');
  assert.equal(mapAnthropicStopReason('stop_sequence'), 'stop');
  assert.equal(mapAnthropicStopReason('pause_turn'), 'stop');
  assert.equal(mapAnthropicStopReason('max_tokens'), 'length');
  assert.equal(mapAnthropicStopReason('model_context_window_exceeded'), 'length');
  assert.equal(mapAnthropicStopReason('tool_use'), 'tool_calls');
  assert.equal(mapAnthropicStopReason('refusal'), 'content_filter');
});

test('defaults unknown and missing reasons to stop', () => {
  assert.equal(mapAnthropicStopReason('something_new'), 'stop');
  assert.equal(mapAnthropicStopReason(null), 'stop');
  assert.equal(mapAnthropicStopReason(undefined), 'stop');
});
