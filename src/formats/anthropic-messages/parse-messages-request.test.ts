import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '../../errors/gateway-error.ts';
import { image, redactedReasoning, signedReasoning, text, toolResult } from '../../testing/canonical-builders.ts';
import { parseBetas, parseMessagesRequest, parseVersion } from './parse-messages-request.ts';
import { base64Image, urlImage } from './anthropic-wire-test-kit.ts';

const base = { model: 'svc/balanced', max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }] };
const cache = { type: 'ephemeral' };

function rejects(body: unknown, field: RegExp) {
  assert.throws(
    () => parseMessagesRequest(body),
    (error) => error instanceof GatewayError && error.code === 'invalid_request' && field.test(error.message),
  );
}

describe('messages', () => {
  test('system blocks, a system message, user parts, signed thinking, tool use and tool results', () => {
    const parsed = parseMessagesRequest({
      ...base,
      system: [
        { type: 'text', text: 'You are Claude Code.', cache_control: cache },
        { type: 'text', text: 'Be brief.' },
      ],
      messages: [
        { role: 'system', content: 'Extra rules.' },
        {
          role: 'user',
          content: [{ type: 'text', text: 'Look:', cache_control: cache }, base64Image('image/png', 'iVBORw0KGgo='), urlImage('https://x/cat.png')],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Let me look.', signature: 'sig-1' },
            { type: 'redacted_thinking', data: 'opaque' },
            { type: 'text', text: 'Reading it.' },
            { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { path: 'a.png' } },
            { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'text', text: '<system-reminder>x</system-reminder>' },
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: [{ type: 'text', text: 'an image:' }, base64Image('image/png', 'AAAA')],
              is_error: false,
              cache_control: cache,
            },
          ],
        },
        { role: 'assistant', content: 'Done.' },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: 'boom', is_error: true }] },
      ],
    });
    assert.deepEqual(parsed.request.messages, [
      { role: 'system', content: 'You are Claude Code.', providerOptions: { anthropic: { cacheControl: cache } } },
      { role: 'system', content: 'Be brief.' },
      { role: 'system', content: 'Extra rules.' },
      {
        role: 'user',
        content: [
          text('Look:', { providerOptions: { anthropic: { cacheControl: cache } } }),
          image('data:image/png;base64,iVBORw0KGgo='),
          image('https://x/cat.png'),
        ],
      },
      {
        role: 'assistant',
        content: 'Reading it.',
        toolCalls: [{ id: 'toolu_1', name: 'Read', arguments: '{"path":"a.png"}' }],
        reasoning: [signedReasoning('Let me look.', 'sig-1'), redactedReasoning('opaque')],
      },
      toolResult('toolu_1', [text('an image:'), image('data:image/png;base64,AAAA')], { providerOptions: { anthropic: { cacheControl: cache } } }),
      { role: 'user', content: [text('<system-reminder>x</system-reminder>')] },
      { role: 'assistant', content: 'Done.' },
      toolResult('toolu_2', 'boom', { isError: true }),
    ]);
  });

  test('a cache breakpoint on an assistant block stays on the turn; text documents become text', () => {
    const parsed = parseMessagesRequest({
      ...base,
      messages: [
        { role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'notes' } }] },
        { role: 'assistant', content: [{ type: 'text', text: 'ok', cache_control: cache }] },
      ],
    });
    assert.deepEqual(parsed.request.messages, [
      { role: 'user', content: [text('notes')] },
      { role: 'assistant', content: 'ok', providerOptions: { anthropic: { cacheControl: cache } } },
    ]);
  });
});

describe('request fields', () => {
  test('sampling, stop sequences, tools, tool choice, routing; unknown fields pass through, tagged Anthropic', () => {
    const parsed = parseMessagesRequest({
      ...base,
      max_tokens: 32_000,
      stream: true,
      temperature: 1,
      top_p: 0.9,
      top_k: 5,
      stop_sequences: ['END'],
      tools: [
        { name: 'Bash', description: 'Run', input_schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' } },
        { name: 'Later', input_schema: { type: 'object' }, defer_loading: true, cache_control: cache },
        { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
      ],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      metadata: { user_id: '{"device_id":"d","session_id":"s"}' },
      context_management: { edits: [{ type: 'clear_thinking_20251015' }] },
      output_config: { effort: 'high', format: { type: 'json_schema' } },
      routing: { fallback: false },
    });
    const { request } = parsed;
    assert.equal(parsed.model, 'svc/balanced');
    assert.equal(parsed.stream, true);
    assert.deepEqual(parsed.routing, { fallback: false, clampMaxOutput: true });
    assert.equal(request.maxOutputTokens, 32_000);
    assert.deepEqual([request.temperature, request.topP, request.stop], [1, 0.9, ['END']]);
    assert.deepEqual(request.tools, [
      { name: 'Bash', description: 'Run', parameters: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' } },
      { name: 'Later', parameters: { type: 'object' }, providerOptions: { anthropic: { cacheControl: cache } }, extra: { defer_loading: true } },
      { name: 'web_search', extra: { type: 'web_search_20250305', max_uses: 3 } },
    ]);
    assert.equal(request.toolChoice, 'required');
    assert.equal(request.parallelToolCalls, false);
    assert.equal(request.reasoningEffort, 'xhigh');
    assert.deepEqual(request.passThrough.format, 'anthropic');
    assert.deepEqual(request.passThrough.fields, {
      top_k: 5,
      metadata: { user_id: '{"device_id":"d","session_id":"s"}' },
      context_management: { edits: [{ type: 'clear_thinking_20251015' }] },
      output_config: { format: { type: 'json_schema' } },
    });
  });

  test('tool_choice kinds', () => {
    const choice = (tool_choice: unknown) => {
      const { request } = parseMessagesRequest({ ...base, tool_choice });
      return [request.toolChoice, request.parallelToolCalls];
    };
    assert.deepEqual(choice({ type: 'auto' }), ['auto', undefined]);
    assert.deepEqual(choice({ type: 'auto', disable_parallel_tool_use: false }), ['auto', true]);
    assert.deepEqual(choice({ type: 'tool', name: 'Bash' }), [{ name: 'Bash' }, undefined]);
    assert.deepEqual(choice({ type: 'none' }), ['none', undefined]);
  });

  test('thinking and effort -> reasoning level', () => {
    const effort = (fields: Record<string, unknown>) => parseMessagesRequest({ ...base, ...fields }).request.reasoningEffort;
    assert.equal(effort({}), 'none', "no thinking is Anthropic's default: off");
    assert.equal(effort({ thinking: { type: 'disabled' } }), 'none');
    assert.equal(effort({ thinking: { type: 'disabled' }, output_config: { effort: 'high' } }), 'none');
    assert.equal(effort({ thinking: { type: 'adaptive' } }), undefined, 'adaptive takes the alias default');
    assert.equal(effort({ thinking: { type: 'adaptive' }, output_config: { effort: 'low' } }), 'low');
    assert.equal(effort({ thinking: { type: 'adaptive' }, output_config: { effort: 'max' } }), 'xhigh');
    assert.equal(effort({ output_config: { effort: 'medium' } }), 'medium');
    assert.equal(effort({ thinking: { type: 'enabled', budget_tokens: 1_024 } }), 'low');
    assert.equal(effort({ thinking: { type: 'enabled', budget_tokens: 4_096 } }), 'medium');
    assert.equal(effort({ thinking: { type: 'enabled', budget_tokens: 16_384 } }), 'xhigh');
    assert.equal(effort({ thinking: { type: 'enabled', budget_tokens: 31_999 }, output_config: { effort: 'low' } }), 'low');
  });

  test('the version from the anthropic-version header', () => {
    assert.equal(parseVersion(' 2023-06-01 '), '2023-06-01');
    assert.equal(parseVersion(undefined), undefined);
    assert.equal(parseMessagesRequest(base, { version: '2023-06-01' }).request.providerOptions?.anthropic?.version, '2023-06-01');
  });

  test('betas from the anthropic-beta header', () => {
    assert.deepEqual(parseBetas('a-1, b-2,,c-3'), ['a-1', 'b-2', 'c-3']);
    assert.deepEqual(parseBetas(['a', 'b,c']), ['a', 'b', 'c']);
    assert.equal(parseBetas(undefined), undefined);
    assert.deepEqual(parseMessagesRequest(base, { betas: ['x'] }).request.providerOptions?.anthropic?.betas, ['x']);
    assert.equal(parseMessagesRequest(base).request.providerOptions, undefined);
  });
});

test('names the offending field', () => {
  rejects([], /JSON object/);
  rejects({ ...base, model: 3 }, /model/);
  rejects({ ...base, messages: [] }, /messages/);
  rejects({ ...base, max_tokens: 0 }, /max_tokens/);
  rejects({ ...base, stream: 'yes' }, /stream/);
  rejects({ ...base, system: [{ type: 'image' }] }, /system\[0\]/);
  rejects({ ...base, messages: [{ role: 'tool', content: 'x' }] }, /messages\[0\]\.role/);
  rejects({ ...base, messages: [{ role: 'user', content: [{ type: 'audio' }] }] }, /messages\[0\]\.content\[0\]\.type/);
  rejects({ ...base, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64' } }] }] }, /messages\[0\]\.content\[0\]/);
  rejects({ ...base, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] }] }, /source\.type/);
  rejects({ ...base, messages: [{ role: 'user', content: [{ type: 'tool_result' }] }] }, /tool_use_id/);
  rejects({ ...base, messages: [{ role: 'user', content: [{ type: 'text', text: 'x', cache_control: 'yes' }] }] }, /cache_control/);
  rejects({ ...base, messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 't' }] }] }, /messages\[0\]\.content\[0\] needs id and name/);
  rejects({ ...base, tools: [{ description: 'x' }] }, /tools\[0\]\.name/);
  rejects({ ...base, tools: [{ name: 'x', input_schema: 'object' }] }, /tools\[0\]\.input_schema/);
  rejects({ ...base, tool_choice: { type: 'sometimes' } }, /tool_choice\.type/);
  rejects({ ...base, tool_choice: { type: 'tool' } }, /tool_choice\.name/);
  rejects({ ...base, temperature: 'hot' }, /temperature/);
  rejects({ ...base, top_k: -1 }, /top_k/);
  rejects({ ...base, stop_sequences: 'END' }, /stop_sequences/);
  rejects({ ...base, thinking: 'on' }, /thinking/);
  rejects({ ...base, thinking: { type: 'enabled' } }, /thinking\.budget_tokens/);
  rejects({ ...base, output_config: { effort: 'extreme' } }, /output_config\.effort/);
  rejects({ ...base, routing: { allowed_models: 'a/b' } }, /routing\.allowed_models/);
});
