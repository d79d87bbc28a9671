import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProviderError } from '../../providers/provider-error.ts';
import { convertFromOpenAIResponse } from './convert-from-openai-response.ts';

const invalid = (error: unknown) => error instanceof ProviderError && error.failure === 'invalid_response';

test('a body without choices[0].message is an invalid response', () => {
  assert.throws(() => convertFromOpenAIResponse([]), invalid);
  assert.throws(() => convertFromOpenAIResponse({ choices: [] }), invalid);
  assert.throws(() => convertFromOpenAIResponse({ choices: [{ index: 0, text: 'a completion, not a chat' }] }), invalid);
});

test('with n > 1 only the choice with index 0 is the answer', () => {
  const body = {
    choices: [
      { index: 1, message: { content: 'second' }, finish_reason: 'stop' },
      { index: 0, message: { content: 'first' }, finish_reason: 'length' },
    ],
  };
  assert.deepEqual(convertFromOpenAIResponse(body), { content: 'first', toolCalls: [], finishReason: 'length' });
});

test('a tool call without arguments or id still gives JSON arguments and an id; tool calls finish as tool_calls', () => {
  const body = {
    choices: [{ message: { content: null, tool_calls: [{ type: 'function', function: { name: 'now', arguments: '' } }] }, finish_reason: 'stop' }],
  };
  assert.deepEqual(convertFromOpenAIResponse(body), {
    content: '',
    toolCalls: [{ id: 'call_0', name: 'now', arguments: '{}' }],
    finishReason: 'tool_calls',
  });
});

test("Groq's usage outside the standard field is read", () => {
  const body = { choices: [{ message: { content: 'x' }, finish_reason: 'stop' }], x_groq: { usage: { prompt_tokens: 5, completion_tokens: 1 } } };
  assert.deepEqual(convertFromOpenAIResponse(body).usage, {
    inputTokens: 5,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 1,
    reasoningTokens: 0,
  });
});
