import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '../../errors/gateway-error.ts';
import { image, text } from '../../testing/canonical-builders.ts';
import { parseChatCompletionRequest } from './parse-chat-request.ts';

const base = { model: 'svc/fast', messages: [{ role: 'user', content: 'hi' }] };

function rejects(body: unknown, field: RegExp) {
  assert.throws(
    () => parseChatCompletionRequest(body),
    (error) => error instanceof GatewayError && error.code === 'invalid_request' && field.test(error.message),
  );
}

test('translates every role and content part to the canonical request', () => {
  const parsed = parseChatCompletionRequest({
    model: 'svc/fast',
    messages: [
      { role: 'developer', content: [{ type: 'text', text: 'Rules.' }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look:' },
          { type: 'image_url', image_url: { url: 'https://x/cat.png', detail: 'low' } },
        ],
      },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'done' }] },
    ],
    stop: 'END',
    max_tokens: 10,
    max_completion_tokens: 20,
    reasoning_effort: 'high',
    stream: true,
    stream_options: { include_usage: true },
    routing: { fallback: false, allowed_models: ['a/b'] },
    logit_bias: { 1: 2 },
  });
  assert.deepEqual(parsed.request.messages, [
    { role: 'developer', content: 'Rules.' },
    { role: 'user', content: [text('Look:'), image('https://x/cat.png', { detail: 'low' })] },
    { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'f', arguments: '{}' }] },
    { role: 'tool', toolCallId: 'c1', content: 'done' },
  ]);
  assert.deepEqual(parsed.request.stop, ['END']);
  assert.equal(parsed.request.maxOutputTokens, 20, 'max_completion_tokens wins over the deprecated max_tokens');
  assert.equal(parsed.request.reasoningEffort, 'xhigh');
  assert.deepEqual(parsed.request.passThrough, { format: 'openai', fields: { logit_bias: { 1: 2 } } });
  assert.deepEqual(parsed.routing, { fallback: false, allowedModels: ['a/b'] });
  assert.equal(parsed.stream, true);
  assert.equal(parsed.includeUsage, true);
});

test('names the offending field', () => {
  rejects([], /JSON object/);
  rejects({ ...base, model: '' }, /model/);
  rejects({ ...base, messages: [] }, /messages/);
  rejects({ ...base, messages: [{ role: 'user', content: [{ type: 'audio' }] }] }, /messages\[0\]\.content\[0\]\.type/);
  rejects({ ...base, messages: [{ role: 'assistant' }] }, /messages\[0\] needs content or tool_calls/);
  rejects({ ...base, messages: [{ role: 'tool', content: 'x' }] }, /messages\[0\]\.tool_call_id/);
  rejects({ ...base, max_completion_tokens: 1.5 }, /max_completion_tokens/);
  rejects({ ...base, temperature: 'hot' }, /temperature/);
  rejects({ ...base, reasoning_effort: 'extreme' }, /reasoning_effort/);
  rejects({ ...base, tools: [{ type: 'function' }] }, /tools\[0\]/);
  rejects({ ...base, tool_choice: 'sometimes' }, /tool_choice/);
  rejects({ ...base, stream: 'yes' }, /stream/);
  rejects({ ...base, routing: { allowed_models: 'a/b' } }, /routing\.allowed_models/);
});
