import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StreamPart } from '../../canonical/stream-part.ts';
import { redactedReasoningEnd, signedReasoningEnd } from '../../testing/canonical-builders.ts';
import type { AnthropicStreamEvent } from './anthropic-wire-types.ts';
import { AnthropicStreamState } from './convert-from-anthropic-events.ts';
import { AnthropicFormatError, AnthropicStreamInterrupted } from './anthropic-format-errors.ts';

async function run(events: AnthropicStreamEvent[]): Promise<{ parts: StreamPart[]; error?: unknown }> {
  const parts: StreamPart[] = [];
  try {
    const state = new AnthropicStreamState();
    for (const event of events) parts.push(...state.accept(event));
    state.finish();
    return { parts };
  } catch (error) {
    return { parts, error };
  }
}

const start = (usage: Record<string, number> = { input_tokens: 5 }): AnthropicStreamEvent => ({
  type: 'message_start',
  message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], usage },
});

test('numbers tool calls apart from text blocks and ends with one finish', async () => {
  const { parts, error } = await run([
    start({ input_tokens: 10, cache_read_input_tokens: 100, cache_creation_input_tokens: 20, output_tokens: 1 }),
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_a', name: 'f', input: {} } },
    { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '' } },
    { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"a":1}' } },
    { type: 'content_block_stop', index: 1 },
    { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_b', name: 'g', input: {} } },
    { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{}' } },
    { type: 'content_block_stop', index: 2 },
    { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 42 } },
    { type: 'message_stop' },
  ]);
  assert.equal(error, undefined);
  assert.deepEqual(parts, [
    { type: 'text-delta', text: 'Hi' },
    { type: 'tool-call-start', index: 0, id: 'toolu_a', name: 'f' },
    { type: 'tool-call-delta', index: 0, argumentsDelta: '{"a":1}' },
    { type: 'tool-call-start', index: 1, id: 'toolu_b', name: 'g' },
    { type: 'tool-call-delta', index: 1, argumentsDelta: '{}' },
    {
      type: 'finish',
      finishReason: 'tool_calls',
      usage: { inputTokens: 130, cachedInputTokens: 100, cacheWriteTokens: 20, outputTokens: 42, reasoningTokens: 0 },
    },
  ]);
});

test('takes cumulative input counts from message_delta when it reports them', async () => {
  const { parts } = await run([
    start({ input_tokens: 0 }),
    { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { input_tokens: 7, cache_read_input_tokens: 3, output_tokens: 2 } },
    { type: 'message_stop' },
  ]);
  assert.deepEqual(parts.at(-1), {
    type: 'finish',
    finishReason: 'stop',
    usage: { inputTokens: 10, cachedInputTokens: 3, cacheWriteTokens: 0, outputTokens: 2, reasoningTokens: 0 },
  });
});

test('finishes without usage when none was reported, and ignores events after message_stop', async () => {
  const { parts, error } = await run([
    { type: 'message_start', message: {} },
    { type: 'message_stop' },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'late' } },
  ]);
  assert.equal(error, undefined);
  assert.deepEqual(parts, [{ type: 'finish', finishReason: 'stop' }]);
});

test('throws on an error event and on a stream cut before message_stop', async () => {
  const failed = await run([start(), { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }]);
  assert.ok(failed.error instanceof AnthropicStreamInterrupted);
  assert.match((failed.error as Error).message, /overloaded_error: Overloaded/);
  const cut = await run([
    start(),
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } },
  ]);
  assert.deepEqual(cut.parts, [{ type: 'text-delta', text: 'Hel' }]);
  assert.ok(cut.error instanceof AnthropicStreamInterrupted);
});

test('rejects events without the documented fields', async () => {
  const noIndex = await run([start(), { type: 'content_block_delta', delta: { type: 'text_delta', text: 'x' } }]);
  assert.ok(noIndex.error instanceof AnthropicFormatError);
  const jsonIntoText = await run([
    start(),
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{}' } },
  ]);
  assert.ok(jsonIntoText.error instanceof AnthropicFormatError);
});

test('turns thinking into reasoning with its signature, keeps redacted thinking, skips pings and unknown events', async () => {
  const { parts } = await run([
    start(),
    { type: 'ping' },
    { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hmm' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } },
    { type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'xyz' } },
    { type: 'something_new', foo: 1 },
    { type: 'message_delta', delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 9 } },
    { type: 'message_stop' },
  ]);
  assert.deepEqual(parts.slice(0, -1), [{ type: 'reasoning-delta', text: 'hmm' }, signedReasoningEnd('sig'), redactedReasoningEnd('xyz')]);
  assert.equal((parts.at(-1) as { finishReason: string }).finishReason, 'length');
});

test('names the stop sequence that ended the answer', async () => {
  const { parts } = await run([
    start(),
    { type: 'message_delta', delta: { stop_reason: 'stop_sequence', stop_sequence: 'END' }, usage: { output_tokens: 1 } },
    { type: 'message_stop' },
  ]);
  assert.deepEqual(parts.at(-1), {
    type: 'finish',
    finishReason: 'stop',
    usage: { inputTokens: 5, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 1, reasoningTokens: 0 },
    stopSequence: 'END',
  });
});
