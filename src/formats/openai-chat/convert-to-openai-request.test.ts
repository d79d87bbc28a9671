import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelConfig } from '../../config/schema.ts';
import type { ChatRequest } from '../../canonical/chat-request.ts';
import type { ProviderCall } from '../../providers/provider.ts';
import { image, redactedReasoning, signedReasoning, text, toolCall, toolResult } from '../../testing/canonical-builders.ts';
import { convertToOpenAIRequest } from './convert-to-openai-request.ts';

const model = { upstream: 'alpha', capabilities: { tools: true, vision: true, reasoning: false } } as ModelConfig;
const cache = { type: 'ephemeral' };

function convert(request: Partial<ChatRequest>, stream = false, warn?: (message: string) => void) {
  const call: ProviderCall = {
    request: { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], passThrough: { format: 'openai', fields: {} }, ...request },
    model,
    maxOutputTokens: 1_000,
    signal: new AbortController().signal,
    ...(warn ? { warn } : {}),
  };
  return convertToOpenAIRequest(call, stream);
}

describe('a request that came in the Anthropic format', () => {
  test('its betas: those whose effect the model has already pass without a word, the others are dropped with a warning each', () => {
    const warnings: string[] = [];
    const betas = ['claude-code-20250219', 'fine-grained-tool-streaming-2025-05-14', 'interleaved-thinking-2025-05-14', 'prompt-caching-2024-07-31'];
    const body = convert({ providerOptions: { anthropic: { betas, version: '2023-06-01' } } }, true, (message) => warnings.push(message));
    assert.deepEqual(warnings, [
      'anthropic-beta claude-code-20250219: a beta with no equivalent for this model; dropped',
      'anthropic-beta interleaved-thinking-2025-05-14: a beta with no equivalent for this model; dropped',
    ]);
    assert.equal(JSON.stringify(body).includes('beta'), false);
    warnings.length = 0;
    convert({ providerOptions: { anthropic: { version: '2022-01-01' } } }, false, (message) => warnings.push(message));
    assert.deepEqual(warnings, ['anthropic-version 2022-01-01: answered in the shapes of 2023-06-01, the version the gateway speaks']);
  });

  test('translates metadata.user_id to user and drops the fields OpenAI has no equivalent for', () => {
    const body = convert({
      passThrough: {
        format: 'anthropic',
        fields: {
          metadata: { user_id: '{"session_id":"s"}' },
          context_management: { edits: [] },
          top_k: 5,
          container: 'c',
          mcp_servers: [],
          output_config: { format: {} },
          service_tier: 'standard_only',
        },
      },
    });
    assert.deepEqual(Object.keys(body).sort(), ['max_tokens', 'messages', 'model', 'user']);
    assert.equal(body.user, '{"session_id":"s"}');
    assert.equal(convert({ passThrough: { format: 'anthropic', fields: { service_tier: 'auto' } } }).service_tier, 'auto');
  });

  test('cache breakpoints and signed thinking leave no trace', () => {
    const body = convert({
      messages: [
        { role: 'system', content: 'S', providerOptions: { anthropic: { cacheControl: cache } } },
        { role: 'user', content: [{ type: 'text', text: 'q', providerOptions: { anthropic: { cacheControl: cache } } }] },
        {
          role: 'assistant',
          content: 'a',
          reasoning: [signedReasoning('t', 's'), redactedReasoning('r')],
          providerOptions: { anthropic: { cacheControl: cache } },
        },
      ],
    });
    assert.deepEqual(body.messages, [
      { role: 'system', content: 'S' },
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'a' },
    ]);
  });

  test('tool results with images: text in the tool message, images in one user message after the results', () => {
    const body = convert({
      messages: [
        { role: 'assistant', content: null, toolCalls: [toolCall('a', 'Read', '{}'), toolCall('b', 'Read', '{}')] },
        toolResult('a', [text('png:'), image('data:image/png;base64,AAAA')], { isError: false }),
        toolResult('b', 'plain', { providerOptions: { anthropic: { cacheControl: cache } } }),
        { role: 'user', content: [text('next')] },
      ],
    });
    assert.deepEqual((body.messages as unknown[]).slice(1), [
      { role: 'tool', tool_call_id: 'a', content: 'png:' },
      { role: 'tool', tool_call_id: 'b', content: 'plain' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Images returned by the tool calls above:' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ],
      },
      { role: 'user', content: 'next' },
    ]);
  });

  test("Anthropic's built-in tools and extra tool fields are dropped, with a tool choice naming them", () => {
    const tools = [
      { name: 'Bash', parameters: { type: 'object' }, providerOptions: { anthropic: { cacheControl: cache } }, extra: { defer_loading: true } },
      { name: 'web_search', extra: { type: 'web_search_20250305' } },
    ];
    const body = convert({ tools, toolChoice: { name: 'web_search' }, parallelToolCalls: false });
    assert.deepEqual(body.tools, [{ type: 'function', function: { name: 'Bash', parameters: { type: 'object' } } }]);
    assert.equal('tool_choice' in body, false);
    assert.equal(body.parallel_tool_calls, false);
    assert.deepEqual(convert({ tools, toolChoice: { name: 'Bash' } }).tool_choice, { type: 'function', function: { name: 'Bash' } });
    const onlyBuiltIn = convert({ tools: [tools[1]!], toolChoice: 'required' });
    assert.equal('tools' in onlyBuiltIn, false);
    assert.equal('tool_choice' in onlyBuiltIn, false);
  });
});

test('an OpenAI client still gets its fields forwarded as sent', () => {
  const body = convert({ passThrough: { format: 'openai', fields: { logit_bias: { 1: 2 }, user: 'u' } }, toolChoice: 'required', stop: ['x'] }, true);
  assert.deepEqual(body.logit_bias, { 1: 2 });
  assert.equal(body.user, 'u');
  assert.equal(body.tool_choice, 'required', 'no tool was dropped, so the choice goes as asked');
  assert.deepEqual(body.stream_options, { include_usage: true });
});
