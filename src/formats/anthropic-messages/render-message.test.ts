import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Usage } from '../../canonical/chat-result.ts';
import { messageId, renderMessage, renderStopReason } from './render-message.ts';

const usage: Usage = { inputTokens: 1_000, cachedInputTokens: 700, cacheWriteTokens: 200, outputTokens: 50, reasoningTokens: 10 };

test('thinking with signatures, text and tool uses, in that order, with cache-aware usage', () => {
  const body = renderMessage({
    id: messageId('req_abc123'),
    model: 'anth/claude',
    usage,
    result: {
      content: 'Checking.',
      reasoning: 'Hmm.',
      reasoningBlocks: [
        { text: 'Hmm.', providerMetadata: { anthropic: { signature: 'sig' } } },
        { text: '', providerMetadata: { anthropic: { redactedData: 'opaque' } } },
      ],
      toolCalls: [
        { id: 'toolu_1', name: 'Read', arguments: '{"path":"a.ts"}' },
        { id: 'call_2', name: 'Bash', arguments: 'not json' },
      ],
      finishReason: 'tool_calls',
    },
  });
  assert.deepEqual(body, {
    id: 'msg_abc123',
    type: 'message',
    role: 'assistant',
    model: 'anth/claude',
    content: [
      { type: 'thinking', thinking: 'Hmm.', signature: 'sig' },
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { path: 'a.ts' } },
      { type: 'tool_use', id: 'call_2', name: 'Bash', input: {} },
    ],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 100, cache_creation_input_tokens: 200, cache_read_input_tokens: 700, output_tokens: 50 },
  });
});

test('unsigned reasoning (another provider) shows as thinking with an empty signature; no empty text block', () => {
  const body = renderMessage({
    id: 'msg_1',
    model: 'up/beta',
    usage,
    result: { content: '', reasoning: 'r', toolCalls: [], finishReason: 'length' },
  });
  assert.deepEqual(body.content, [{ type: 'thinking', thinking: 'r', signature: '' }]);
  assert.equal(body.stop_reason, 'max_tokens');
});

test('stop reasons', () => {
  assert.equal(renderStopReason('stop', undefined), 'end_turn');
  assert.equal(renderStopReason('stop', 'END'), 'stop_sequence');
  assert.equal(renderStopReason('length', undefined), 'max_tokens');
  assert.equal(renderStopReason('tool_calls', undefined), 'tool_use');
  assert.equal(renderStopReason('content_filter', undefined), 'refusal');
  const body = renderMessage({ id: 'msg_1', model: 'm', usage, result: { content: 'a', toolCalls: [], finishReason: 'stop', stopSequence: 'END' } });
  assert.deepEqual([body.stop_reason, body.stop_sequence], ['stop_sequence', 'END']);
});
