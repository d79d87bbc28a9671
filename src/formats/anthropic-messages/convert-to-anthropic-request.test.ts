import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatMessage } from '../../canonical/chat-request.ts';
import { image, redactedReasoning, signedReasoning, text, toolCall, toolResult } from '../../testing/canonical-builders.ts';
import { convertToAnthropicRequest } from './convert-to-anthropic-request.ts';
import { convert, user } from './anthropic-request-test-kit.ts';
import { base64Image } from './anthropic-wire-test-kit.ts';

describe('request fields', () => {
  test('maps model, max tokens, stop, sampling and copies unknown fields', () => {
    const body = convert(
      {
        stop: ['END'],
        temperature: 0.3,
        topP: 0.9,
        passThrough: { format: 'anthropic', fields: { top_k: 5, metadata: { user_id: 'u1' }, model: 'ignored' } },
      },
      { maxOutputTokens: 1_000 },
    );
    assert.deepEqual(body, {
      top_k: 5,
      metadata: { user_id: 'u1' },
      model: 'claude-test',
      max_tokens: 1_000,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      stop_sequences: ['END'],
      temperature: 0.3,
      top_p: 0.9,
    });
  });

  test('an OpenAI client: user becomes metadata.user_id, fields with no equivalent are dropped with a warning each', () => {
    const warnings: string[] = [];
    const body = convertToAnthropicRequest({
      request: {
        messages: [user('hi')],
        passThrough: { format: 'openai', fields: { seed: 7, n: 1, user: 'alice', stream_options: { include_usage: true }, metadata: { a: 'b' } } },
      },
      model: { upstream: 'claude-test' },
      maxOutputTokens: 1_000,
      warn: (message) => warnings.push(message),
    });
    assert.deepEqual(body.metadata, { user_id: 'alice' });
    for (const field of ['seed', 'n', 'user', 'stream_options']) assert.equal(field in body, false, field);
    assert.deepEqual(
      warnings.map((warning) => warning.split(':')[0]),
      ['seed', 'n', 'stream_options', 'metadata'],
    );
  });

  test('maps tools with a default input schema', () => {
    const body = convert({
      tools: [
        { name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
        { name: 'ping' },
      ],
    });
    assert.deepEqual(body.tools, [
      { name: 'get_weather', description: 'Weather by city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
      { name: 'ping', input_schema: { type: 'object', properties: {} } },
    ]);
    assert.equal('tool_choice' in body, false);
  });

  test('maps tool choice and parallel tool calls', () => {
    const tools = [{ name: 'f' }];
    assert.deepEqual(convert({ tools, toolChoice: 'auto' }).tool_choice, { type: 'auto' });
    assert.deepEqual(convert({ tools, toolChoice: 'required' }).tool_choice, { type: 'any' });
    assert.deepEqual(convert({ tools, toolChoice: 'none' }).tool_choice, { type: 'none' });
    assert.deepEqual(convert({ tools, toolChoice: { name: 'f' } }).tool_choice, { type: 'tool', name: 'f' });
    assert.deepEqual(convert({ tools, parallelToolCalls: false }).tool_choice, { type: 'auto', disable_parallel_tool_use: true });
    assert.deepEqual(convert({ tools, toolChoice: 'required', parallelToolCalls: false }).tool_choice, {
      type: 'any',
      disable_parallel_tool_use: true,
    });
    // Without tools, a tool choice would be rejected.
    assert.equal('tool_choice' in convert({ toolChoice: 'required' }), false);
  });
});

describe('what Anthropic clients send, sent back exactly', () => {
  const cache = { type: 'ephemeral', ttl: '1h' };

  test('system blocks with cache_control stay blocks; without any, they join into one string', () => {
    const body = convert({
      messages: [
        { role: 'system', content: 'You are Claude Code.', providerOptions: { anthropic: { cacheControl: cache } } },
        { role: 'system', content: 'Rules.' },
        user('hi'),
      ],
    });
    assert.deepEqual(body.system, [
      { type: 'text', text: 'You are Claude Code.', cache_control: cache },
      { type: 'text', text: 'Rules.' },
    ]);
    assert.equal(convert({ messages: [{ role: 'system', content: 'A' }, { role: 'system', content: 'B' }, user('hi')] }).system, 'A\n\nB');
  });

  test('cache_control on text, images, tool results and the last block of an assistant turn', () => {
    const body = convert({
      messages: [
        {
          role: 'user',
          content: [
            text('look', { providerOptions: { anthropic: { cacheControl: cache } } }),
            image('data:image/png;base64,AAAA', { providerOptions: { anthropic: { cacheControl: cache } } }),
          ],
        },
        { role: 'assistant', content: 'ok', toolCalls: [toolCall('toolu_1', 'Read', '{}')], providerOptions: { anthropic: { cacheControl: cache } } },
        toolResult('toolu_1', [text('an image:'), image('data:image/png;base64,BBBB')], {
          isError: true,
          providerOptions: { anthropic: { cacheControl: cache } },
        }),
      ],
    });
    assert.deepEqual(body.messages, [
      {
        role: 'user',
        content: [{ type: 'text', text: 'look', cache_control: cache }, base64Image('image/png', 'AAAA', { cache_control: cache })],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'ok' },
          { type: 'tool_use', id: 'toolu_1', name: 'Read', input: {}, cache_control: cache },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            content: [{ type: 'text', text: 'an image:' }, base64Image('image/png', 'BBBB')],
            is_error: true,
            cache_control: cache,
          },
        ],
      },
    ]);
  });

  test('signed and redacted thinking open the assistant turn, in order', () => {
    const body = convert({
      messages: [
        user('q'),
        { role: 'assistant', content: 'a', reasoning: [signedReasoning('t1', 's1'), redactedReasoning('r'), { text: 'unsigned' }] },
        user('q2'),
      ],
    });
    assert.deepEqual(body.messages[1]!.content, [
      { type: 'thinking', thinking: 't1', signature: 's1' },
      { type: 'redacted_thinking', data: 'r' },
      { type: 'text', text: 'a' },
    ]);
  });

  test('an assistant prefill keeps its thinking only when thinking is on', () => {
    const messages: ChatMessage[] = [user('q'), { role: 'assistant', content: 'The answer is', reasoning: [signedReasoning('t', 's')] }];
    assert.deepEqual(convert({ messages }).messages[1]!.content, [{ type: 'text', text: 'The answer is' }]);
    assert.deepEqual(
      convert({ messages }, { reasoningEffort: 'low' }).messages[1]!.content.map((block) => block.type),
      ['thinking', 'text'],
    );
  });

  test("tools keep cache_control and the client's extra fields; built-in tools get no input schema", () => {
    const body = convert({
      tools: [
        { name: 'Later', parameters: { type: 'object' }, providerOptions: { anthropic: { cacheControl: cache } }, extra: { defer_loading: true } },
        { name: 'web_search', extra: { type: 'web_search_20250305', max_uses: 3 } },
        { name: 'Custom', extra: { type: 'custom' } },
      ],
    });
    assert.deepEqual(body.tools, [
      { name: 'Later', input_schema: { type: 'object' }, cache_control: cache, defer_loading: true },
      { type: 'web_search_20250305', max_uses: 3, name: 'web_search' },
      { type: 'custom', name: 'Custom', input_schema: { type: 'object', properties: {} } },
    ]);
  });
});

describe('thinking budget', () => {
  test('uses the budget of each effort level', () => {
    assert.deepEqual(convert({}, { reasoningEffort: 'low', maxOutputTokens: 32_000 }).thinking, { type: 'enabled', budget_tokens: 2_048 });
    assert.deepEqual(convert({}, { reasoningEffort: 'medium', maxOutputTokens: 32_000 }).thinking, { type: 'enabled', budget_tokens: 8_192 });
    assert.deepEqual(convert({}, { reasoningEffort: 'xhigh', maxOutputTokens: 32_000 }).thinking, { type: 'enabled', budget_tokens: 24_576 });
    assert.equal('thinking' in convert({}, { maxOutputTokens: 32_000 }), false);
  });

  test('clamps the budget below max_tokens and drops it under 1024', () => {
    assert.deepEqual(convert({}, { reasoningEffort: 'xhigh', maxOutputTokens: 4_096 }).thinking, { type: 'enabled', budget_tokens: 4_095 });
    assert.deepEqual(convert({}, { reasoningEffort: 'low', maxOutputTokens: 1_025 }).thinking, { type: 'enabled', budget_tokens: 1_024 });
    assert.equal('thinking' in convert({}, { reasoningEffort: 'low', maxOutputTokens: 1_024 }), false);
  });

  test('omits temperature and top_p when thinking is on', () => {
    const body = convert({ temperature: 0.2, topP: 0.5 }, { reasoningEffort: 'low' });
    assert.ok(body.thinking);
    assert.equal('temperature' in body, false);
    assert.equal('top_p' in body, false);
  });

  test('goes without thinking when the tool choice forces a tool', () => {
    assert.equal('thinking' in convert({ tools: [{ name: 'f' }], toolChoice: 'required' }, { reasoningEffort: 'low' }), false);
    assert.equal('thinking' in convert({ tools: [{ name: 'f' }], toolChoice: { name: 'f' } }, { reasoningEffort: 'low' }), false);
    assert.ok(convert({ tools: [{ name: 'f' }], toolChoice: 'auto' }, { reasoningEffort: 'low' }).thinking);
  });

  test('keeps thinking in the middle of a tool loop whose last turn opens with its signed thinking', () => {
    const signedLoop: ChatMessage[] = [
      user('weather?'),
      {
        role: 'assistant',
        content: null,
        toolCalls: [{ id: 't1', name: 'f', arguments: '{}' }],
        reasoning: [signedReasoning('I should call f.', 'sig')],
      },
      { role: 'tool', toolCallId: 't1', content: 'sunny' },
    ];
    const body = convert({ messages: signedLoop }, { reasoningEffort: 'medium' });
    assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 4_095 });
    assert.deepEqual(body.messages[1]!.content[0], { type: 'thinking', thinking: 'I should call f.', signature: 'sig' });
    const redacted: ChatMessage[] = [
      signedLoop[0]!,
      { ...(signedLoop[1] as object), reasoning: [redactedReasoning('opaque')] } as ChatMessage,
      signedLoop[2]!,
    ];
    assert.ok(convert({ messages: redacted }, { reasoningEffort: 'medium' }).thinking);
    // Reasoning another provider produced has no signature: Anthropic would refuse it, so it stays behind, and thinking with it.
    const unsigned: ChatMessage[] = [
      signedLoop[0]!,
      { ...(signedLoop[1] as object), reasoning: [{ text: 'from elsewhere' }] } as ChatMessage,
      signedLoop[2]!,
    ];
    const withoutThinking = convert({ messages: unsigned }, { reasoningEffort: 'medium' });
    assert.equal('thinking' in withoutThinking, false);
    assert.deepEqual(
      withoutThinking.messages[1]!.content.map((block) => block.type),
      ['tool_use'],
    );
  });

  test('goes without thinking in the middle of a tool loop whose signed thinking block is lost', () => {
    const toolLoop: ChatMessage[] = [
      user('weather?'),
      { role: 'assistant', content: null, toolCalls: [{ id: 't1', name: 'f', arguments: '{}' }] },
      { role: 'tool', toolCallId: 't1', content: 'sunny' },
    ];
    assert.equal('thinking' in convert({ messages: toolLoop }, { reasoningEffort: 'medium' }), false);
    const afterTheLoop: ChatMessage[] = [...toolLoop, { role: 'assistant', content: 'It is sunny.' }, user('and tomorrow?')];
    assert.ok(convert({ messages: afterTheLoop }, { reasoningEffort: 'medium' }).thinking);
  });
});
