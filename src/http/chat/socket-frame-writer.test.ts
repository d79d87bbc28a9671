import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventData } from './socket-frame-writer.ts';

test('the data of each server-sent event, in order, whatever its event line', () => {
  const text = 'event: response.created\ndata: {"type":"response.created"}\n\nevent: response.completed\ndata: {"type":"response.completed"}\n\n';
  assert.deepEqual(eventData(text), ['{"type":"response.created"}', '{"type":"response.completed"}']);
  assert.deepEqual(eventData('data: {"a":1}\n\n'), ['{"a":1}']);
  assert.deepEqual(eventData(''), []);
});
