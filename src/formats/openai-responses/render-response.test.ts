import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatResult, Usage } from '../../canonical/chat-result.ts';
import { parseResponsesRequest } from './parse-responses-request.ts';
import { toolCall } from '../../testing/canonical-builders.ts';
import { renderResponse } from './render-response.ts';

const context = { id: 'resp_abc', created: 1_700_000_000, model: 'up/alpha' };
const usage: Usage = { inputTokens: 120, cachedInputTokens: 100, cacheWriteTokens: 0, outputTokens: 30, reasoningTokens: 10 };
const tools = [
  { type: 'function', name: 'shell', parameters: { type: 'object' } },
  { type: 'custom', name: 'apply_patch' },
  { type: 'namespace', name: 'fs', description: 'Files', tools: [{ type: 'function', name: 'read' }] },
];

function render(result: Partial<ChatResult>, body: Record<string, unknown> = {}) {
  const parsed = parseResponsesRequest({ model: 'svc/fast', input: 'hi', tools, ...body });
  return renderResponse({ context, result: { content: '', toolCalls: [], finishReason: 'stop', ...result }, usage, parsed }) as any;
}

test('a text answer: one message, usage in Responses terms, the request echoed', () => {
  const response = render({ content: 'Hello' }, { instructions: 'Be brief.', metadata: { a: '1' } });
  assert.equal(response.id, 'resp_abc');
  assert.equal(response.object, 'response');
  assert.equal(response.created_at, 1_700_000_000);
  assert.equal(response.status, 'completed');
  assert.equal(response.model, 'up/alpha');
  assert.equal(response.incomplete_details, null);
  assert.equal(response.error, null);
  assert.deepEqual(response.output, [
    {
      id: 'msg_abc_0',
      type: 'message',
      status: 'completed',
      content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Hello' }],
      role: 'assistant',
    },
  ]);
  assert.deepEqual(response.usage, {
    input_tokens: 120,
    input_tokens_details: { cached_tokens: 100 },
    output_tokens: 30,
    output_tokens_details: { reasoning_tokens: 10 },
    total_tokens: 150,
  });
  assert.equal(response.instructions, 'Be brief.');
  assert.deepEqual(response.metadata, { a: '1' });
  assert.equal(response.store, false);
  assert.equal(response.parallel_tool_calls, true);
  assert.equal(response.tool_choice, 'auto');
  assert.deepEqual(response.tools, tools);
});

test('tool calls come back under the client names: function, custom with its input, namespaced', () => {
  const response = render({
    content: '',
    finishReason: 'tool_calls',
    toolCalls: [
      toolCall('call_1', 'shell', '{"command":["ls"]}'),
      toolCall('call_2', 'apply_patch', '{"input":"*** Begin Patch\\n"}'),
      toolCall('call_3', 'fs__read', '{"path":"a"}'),
    ],
  });
  assert.deepEqual(response.output, [
    { id: 'fc_abc_0', type: 'function_call', status: 'completed', arguments: '{"command":["ls"]}', call_id: 'call_1', name: 'shell' },
    { id: 'ctc_abc_1', type: 'custom_tool_call', status: 'completed', call_id: 'call_2', name: 'apply_patch', input: '*** Begin Patch\n' },
    { id: 'fc_abc_2', type: 'function_call', status: 'completed', arguments: '{"path":"a"}', call_id: 'call_3', name: 'read', namespace: 'fs' },
  ]);
});

test('reasoning is a summary item only when the client asked for summaries', () => {
  const asked = render({ content: 'Yes', reasoning: 'Thinking it over.' }, { reasoning: { summary: 'auto' } });
  assert.deepEqual(
    asked.output.map((item: any) => item.type),
    ['reasoning', 'message'],
  );
  assert.deepEqual(asked.output[0], { id: 'rs_abc_0', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Thinking it over.' }] });
  assert.equal(asked.output[1].id, 'msg_abc_1');
  const silent = render({ content: 'Yes', reasoning: 'Thinking it over.' });
  assert.deepEqual(
    silent.output.map((item: any) => item.type),
    ['message'],
  );
});

test('a cut-short answer is incomplete with the reason; text and calls both kept', () => {
  const response = render({
    content: 'Partial',
    finishReason: 'length',
    toolCalls: [{ id: 'c', name: 'apply_patch', arguments: '{"input":"*** Be' }],
  });
  assert.equal(response.status, 'incomplete');
  assert.deepEqual(response.incomplete_details, { reason: 'max_output_tokens' });
  assert.equal(response.output[1].input, '{"input":"*** Be', 'unparseable custom input is passed on as written');
  assert.equal(render({ content: '', finishReason: 'content_filter' }).incomplete_details.reason, 'content_filter');
  assert.equal(render({ content: '' }).output[0].content[0].text, '', 'an empty answer is still one message');
});
