import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatResult, Usage } from '../../canonical/chat-result.ts';
import type { StreamPart } from '../../canonical/stream-part.ts';
import { finish, reasoningDeltas, signedReasoningEnd, textDeltas, toolCallParts } from '../../testing/canonical-builders.ts';
import { parseResponsesRequest } from './parse-responses-request.ts';
import { renderResponse } from './render-response.ts';
import { ResponsesStreamEncoder } from './responses-stream-encoder.ts';

const context = { id: 'resp_abc', created: 1_700_000_000, model: 'anth/claude' };
const usage: Usage = { inputTokens: 50, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 20, reasoningTokens: 5 };
const tools = [
  { type: 'function', name: 'shell', parameters: { type: 'object' } },
  { type: 'custom', name: 'apply_patch' },
];

/** Encode a whole stream; returns the events, each checked to have matching `event:` and `type`. */
function encode(parts: StreamPart[], body: Record<string, unknown> = {}) {
  const parsed = parseResponsesRequest({ model: 'svc/balanced', input: 'hi', tools, ...body });
  const encoder = new ResponsesStreamEncoder(context, parsed);
  const text = encoder.start() + parts.map((part) => encoder.part(part)).join('') + encoder.end(usage);
  return { events: events(text), parsed };
}

/** The types of the events, in order. */
const types = (events: any[]): string[] => events.map((event) => event.type);

function events(text: string): any[] {
  return text
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => {
      const [eventLine, dataLine, ...rest] = block.split('\n');
      assert.equal(rest.length, 0);
      const data = JSON.parse(dataLine!.replace(/^data: /, ''));
      assert.equal(eventLine, `event: ${data.type}`);
      return data;
    });
}

test('a text answer: the exact event sequence, sequence numbers from 0, completed last with usage', () => {
  const { events: sent } = encode([...textDeltas('Hel', 'lo'), finish('stop')]);
  assert.deepEqual(types(sent), [
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.content_part.added',
    'response.output_text.delta',
    'response.output_text.delta',
    'response.output_text.done',
    'response.content_part.done',
    'response.output_item.done',
    'response.completed',
  ]);
  assert.deepEqual(
    sent.map((event) => event.sequence_number),
    sent.map((_, index) => index),
  );
  assert.equal(sent[0].response.status, 'in_progress');
  assert.deepEqual(sent[0].response.output, []);
  assert.equal(sent[0].response.usage, null);
  assert.deepEqual(sent[2], {
    type: 'response.output_item.added',
    sequence_number: 2,
    output_index: 0,
    item: { id: 'msg_abc_0', type: 'message', status: 'in_progress', content: [], role: 'assistant' },
  });
  assert.deepEqual(sent[4], {
    type: 'response.output_text.delta',
    sequence_number: 4,
    item_id: 'msg_abc_0',
    output_index: 0,
    content_index: 0,
    delta: 'Hel',
    logprobs: [],
  });
  assert.equal(sent[6].text, 'Hello');
  const completed = sent.at(-1).response;
  assert.equal(completed.status, 'completed');
  assert.equal(completed.model, 'anth/claude');
  assert.equal(completed.usage.total_tokens, 70);
  assert.equal(completed.output[0].content[0].text, 'Hello');
});

test('reasoning summary, text and both kinds of tool call: output indexes in order, the same output as non-streaming', () => {
  const parts: StreamPart[] = [
    ...reasoningDeltas('Let me ', 'look.'),
    signedReasoningEnd('sig'),
    ...textDeltas('Checking.'),
    ...toolCallParts(0, 'call_1', 'shell', '{"command":', '["ls"]}'),
    ...toolCallParts(1, 'call_2', 'apply_patch', '{"input":"*** Begin', ' Patch"}'),
    finish('tool_calls'),
  ];
  const { events: sent, parsed } = encode(parts, { reasoning: { summary: 'auto' } });
  assert.deepEqual(
    sent.map((event) => `${event.type}${event.output_index === undefined ? '' : `@${event.output_index}`}`),
    [
      'response.created',
      'response.in_progress',
      'response.output_item.added@0',
      'response.reasoning_summary_part.added@0',
      'response.reasoning_summary_text.delta@0',
      'response.reasoning_summary_text.delta@0',
      'response.reasoning_summary_text.done@0',
      'response.reasoning_summary_part.done@0',
      'response.output_item.done@0',
      'response.output_item.added@1',
      'response.content_part.added@1',
      'response.output_text.delta@1',
      'response.output_text.done@1',
      'response.content_part.done@1',
      'response.output_item.done@1',
      'response.output_item.added@2',
      'response.function_call_arguments.delta@2',
      'response.function_call_arguments.delta@2',
      'response.output_item.added@3',
      'response.function_call_arguments.done@2',
      'response.output_item.done@2',
      'response.custom_tool_call_input.delta@3',
      'response.custom_tool_call_input.done@3',
      'response.output_item.done@3',
      'response.completed',
    ],
  );
  const added = sent.find((event) => event.type === 'response.output_item.added' && event.output_index === 2);
  assert.deepEqual(added.item, { id: 'fc_abc_2', type: 'function_call', status: 'in_progress', arguments: '', call_id: 'call_1', name: 'shell' });
  const argumentsDone = sent.find((event) => event.type === 'response.function_call_arguments.done');
  assert.deepEqual([argumentsDone.name, argumentsDone.arguments], ['shell', '{"command":["ls"]}']);
  assert.equal(sent.find((event) => event.type === 'response.custom_tool_call_input.done').input, '*** Begin Patch');

  const result: ChatResult = {
    content: 'Checking.',
    reasoning: 'Let me look.',
    toolCalls: [
      { id: 'call_1', name: 'shell', arguments: '{"command":["ls"]}' },
      { id: 'call_2', name: 'apply_patch', arguments: '{"input":"*** Begin Patch"}' },
    ],
    finishReason: 'tool_calls',
  };
  assert.deepEqual(sent.at(-1).response, renderResponse({ context, result, usage, parsed }), 'streaming and non-streaming agree');
});

test('reasoning without a summary request sends nothing; an empty answer is still one message', () => {
  const { events: sent } = encode([...reasoningDeltas('hidden'), finish('stop')]);
  assert.deepEqual(types(sent), [
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.content_part.added',
    'response.output_text.done',
    'response.content_part.done',
    'response.output_item.done',
    'response.completed',
  ]);
  assert.equal(sent.at(-1).response.output[0].content[0].text, '');
});

test('a cut-short answer ends with response.completed, status incomplete', () => {
  const { events: sent } = encode([...textDeltas('Par'), finish('length')]);
  const last = sent.at(-1);
  assert.equal(last.type, 'response.completed');
  assert.equal(last.response.status, 'incomplete');
  assert.deepEqual(last.response.incomplete_details, { reason: 'max_output_tokens' });
});

test('a failure mid-stream is response.failed with the contract error and the items already done', () => {
  const parsed = parseResponsesRequest({ model: 'svc/balanced', input: 'hi' });
  const encoder = new ResponsesStreamEncoder(context, parsed);
  const text =
    encoder.start() +
    encoder.part({ type: 'text-delta', text: 'Hi' }) +
    encoder.part({ type: 'tool-call-start', index: 0, id: 'call_1', name: 'shell' }) +
    encoder.fail({ message: 'anth/claude failed', type: 'api_error', code: 'provider_unavailable', retryable: true, request_id: 'req_abc' });
  const sent = events(text);
  const failed = sent.at(-1);
  assert.equal(failed.type, 'response.failed');
  assert.equal(failed.sequence_number, sent.length - 1);
  assert.equal(failed.response.status, 'failed');
  assert.deepEqual(failed.response.error, {
    message: 'anth/claude failed',
    type: 'api_error',
    code: 'provider_unavailable',
    retryable: true,
    request_id: 'req_abc',
  });
  assert.deepEqual(
    failed.response.output.map((item: any) => item.id),
    ['msg_abc_0'],
    'the message was closed by the call; the call never finished',
  );
});

test("a compaction (Codex's compaction_trigger last) answers one compaction item holding the model's note, streamed or not, and nothing else", () => {
  const input = [{ type: 'message', role: 'user', content: 'fix the test' }, { type: 'compaction_trigger' }];
  const { events: sent, parsed } = encode([...textDeltas('Goal: fix ', 'the test.'), ...toolCallParts(0, 'call_1', 'shell', '{}'), finish('stop')], {
    input,
  });
  assert.equal(parsed.request.toolChoice, 'none', 'the note is text: no tool may be called');
  assert.deepEqual(types(sent), [
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.output_item.done',
    'response.completed',
  ]);
  const item = sent[3].item;
  assert.equal(item.type, 'compaction');
  assert.deepEqual(sent[4].response.output, [item]);

  // Read back on a later turn: the note, for any model.
  const later = parseResponsesRequest({ model: 'svc/balanced', input: [item, { type: 'message', role: 'user', content: 'go on' }] });
  assert.deepEqual(later.request.messages[0], {
    role: 'user',
    content: [{ type: 'text', text: 'Earlier turns of this conversation were compacted into this note:\n\nGoal: fix the test.' }],
  });
  const whole = renderResponse({
    context,
    result: { content: 'Goal: fix the test.', toolCalls: [], finishReason: 'stop' } as unknown as ChatResult,
    usage,
    parsed,
  });
  assert.deepEqual(whole.output, [item]);
});
