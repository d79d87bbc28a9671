import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { StreamPart } from '../../canonical/stream-part.ts';
import { finish, reasoningDeltas, redactedReasoningEnd, signedReasoningEnd, textDeltas, toolCallParts } from '../../testing/canonical-builders.ts';
import { MessageStreamEncoder } from './message-stream-encoder.ts';

const usage = { inputTokens: 120, cachedInputTokens: 100, cacheWriteTokens: 0, outputTokens: 30, reasoningTokens: 0 };

/** The events of an encoded stream as [name, data] pairs, checking the SSE framing on the way. */
function events(text: string): Array<[string, any]> {
  assert.ok(text.endsWith('\n\n'));
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((block) => {
      const match = /^event: ([a-z_]+)\ndata: (\{.*\})$/.exec(block);
      assert.ok(match, `not one event: ${JSON.stringify(block)}`);
      const data = JSON.parse(match[2]!);
      assert.equal(data.type, match[1], 'the data repeats the event name');
      return [match[1]!, data] as [string, any];
    });
}

function encode(parts: StreamPart[]): string {
  const encoder = new MessageStreamEncoder('msg_1', 'anth/claude', { inputTokens: 7, cachedInputTokens: 0, cacheWriteTokens: 0 });
  return encoder.start() + parts.map((part) => encoder.part(part)).join('') + encoder.end(usage);
}

test('thinking, text and two tool uses: blocks numbered in order, each started, filled and stopped', () => {
  const list = events(
    encode([
      ...reasoningDeltas('Hm', 'm.'),
      signedReasoningEnd('sig'),
      ...textDeltas('Checking', ''),
      ...toolCallParts(0, 'toolu_a', 'Read', '{"path":', '"a"}'),
      ...toolCallParts(1, 'toolu_b', 'Bash', '{}'),
      finish('tool_calls', { usage }),
    ]),
  );
  assert.deepEqual(list, [
    [
      'message_start',
      {
        type: 'message_start',
        message: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'anth/claude',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
        },
      },
    ],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Hm' } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'm.' } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } }],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }],
    ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Checking' } }],
    ['content_block_stop', { type: 'content_block_stop', index: 1 }],
    ['content_block_start', { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_a', name: 'Read', input: {} } }],
    ['content_block_delta', { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"path":' } }],
    ['content_block_delta', { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '"a"}' } }],
    ['content_block_stop', { type: 'content_block_stop', index: 2 }],
    ['content_block_start', { type: 'content_block_start', index: 3, content_block: { type: 'tool_use', id: 'toolu_b', name: 'Bash', input: {} } }],
    ['content_block_delta', { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{}' } }],
    ['content_block_stop', { type: 'content_block_stop', index: 3 }],
    [
      'message_delta',
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { input_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 100, output_tokens: 30 },
      },
    ],
    ['message_stop', { type: 'message_stop' }],
  ]);
});

test('a signature closes its thinking block: later reasoning opens a new one; redacted thinking is a block of its own', () => {
  const list = events(
    encode([
      ...reasoningDeltas('a'),
      signedReasoningEnd('s1'),
      redactedReasoningEnd('opaque'),
      ...reasoningDeltas('b'),
      signedReasoningEnd('s2'),
      ...textDeltas('x'),
      finish('stop', { stopSequence: 'END' }),
    ]),
  );
  const shape = list.map(([name, data]) => `${name}:${data.index ?? ''}:${data.content_block?.type ?? data.delta?.type ?? ''}`);
  assert.deepEqual(shape, [
    'message_start::',
    'content_block_start:0:thinking',
    'content_block_delta:0:thinking_delta',
    'content_block_delta:0:signature_delta',
    'content_block_stop:0:',
    'content_block_start:1:redacted_thinking',
    'content_block_stop:1:',
    'content_block_start:2:thinking',
    'content_block_delta:2:thinking_delta',
    'content_block_delta:2:signature_delta',
    'content_block_stop:2:',
    'content_block_start:3:text',
    'content_block_delta:3:text_delta',
    'content_block_stop:3:',
    'message_delta::',
    'message_stop::',
  ]);
  assert.deepEqual(list.at(-2)![1].delta, { stop_reason: 'stop_sequence', stop_sequence: 'END' });
});

test('unsigned reasoning (another provider) then text: thinking block without a signature delta', () => {
  const list = events(encode([...reasoningDeltas('r'), ...textDeltas('t'), finish('length')]));
  assert.deepEqual(
    list.map(([name, data]) => data.delta?.type ?? name),
    [
      'message_start',
      'content_block_start',
      'thinking_delta',
      'content_block_stop',
      'content_block_start',
      'text_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ],
  );
  assert.equal(list.at(-2)![1].delta.stop_reason, 'max_tokens');
});

test('an empty answer is message_start, message_delta, message_stop', () => {
  assert.deepEqual(
    events(encode([finish('stop')])).map(([name]) => name),
    ['message_start', 'message_delta', 'message_stop'],
  );
});

test('a failure is one error event in the Anthropic shape', () => {
  const encoder = new MessageStreamEncoder('msg_1', 'm');
  const text = encoder.fail(new GatewayError('provider_unavailable', 'anth/claude failed after the answer began'), 'req_1');
  assert.deepEqual(events(text), [
    [
      'error',
      {
        type: 'error',
        error: {
          type: 'overloaded_error',
          message: 'anth/claude failed after the answer began',
          code: 'provider_unavailable',
          retryable: true,
          request_id: 'req_1',
        },
        request_id: 'req_1',
      },
    ],
  ]);
});
