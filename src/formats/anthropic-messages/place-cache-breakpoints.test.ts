import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatMessage } from '../../canonical/chat-request.ts';
import { text, toolCall, toolResult } from '../../testing/canonical-builders.ts';
import { convert, user } from './anthropic-request-test-kit.ts';
import { minimumCacheableTokens } from './place-cache-breakpoints.ts';

const long = (word: string) => `${word} `.repeat(1_200);
const marks = (value: unknown) => (JSON.stringify(value).match(/"cache_control":\{"type":"ephemeral"\}/g) ?? []).length;
const tools = [{ name: 'read_file', description: long('Reads a file.'), parameters: { type: 'object', properties: {} } }];

/** A tool loop: the task, then `turns` tool calls each with its result. */
function loop(turns: number): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: 'system', content: long('You are a coding agent.') }, user('Fix the bug.')];
  for (let turn = 0; turn < turns; turn++) {
    messages.push({ role: 'assistant', content: null, toolCalls: [toolCall(`call_${turn}`, 'read_file', '{"path":"a.ts"}')] });
    messages.push(toolResult(`call_${turn}`, `contents ${turn}`));
  }
  return messages;
}

describe('automatic cache breakpoints', () => {
  test('mark the tools, the system prompt, the previous prompt end and the last block: four at most', () => {
    const body = convert({ messages: loop(3), tools }, { automaticCaching: true });
    assert.deepEqual(body.tools?.at(-1)?.cache_control, { type: 'ephemeral' });
    assert.deepEqual(body.system, [{ type: 'text', text: long('You are a coding agent.'), cache_control: { type: 'ephemeral' } }]);
    const last = body.messages.at(-1)!;
    assert.deepEqual(last.content.at(-1), {
      type: 'tool_result',
      tool_use_id: 'call_2',
      content: 'contents 2',
      cache_control: { type: 'ephemeral' },
    });
    // The message that ended the previous request: its last breakpoint, read again whatever the last turn added.
    assert.deepEqual(body.messages.at(-3)!.content.at(-1), {
      type: 'tool_result',
      tool_use_id: 'call_1',
      content: 'contents 1',
      cache_control: { type: 'ephemeral' },
    });
    assert.equal(marks(body), 4);
  });

  test('leave out a prefix shorter than the minimum cacheable length, even at one token a byte', () => {
    const body = convert(
      { messages: [{ role: 'system', content: 'Be brief.' }, user(long('word'))], tools: [{ name: 'ping' }] },
      { automaticCaching: true },
    );
    assert.equal(body.tools?.[0]?.cache_control, undefined);
    assert.equal(body.system, 'Be brief.');
    assert.equal(marks(body), 1);
    assert.equal(marks(convert({ messages: [user('hi')] }, { automaticCaching: true })), 0);
  });

  test('a request with its own breakpoints goes as marked; none are placed when the setting is off', () => {
    const own: ChatMessage[] = [
      user(long('word')),
      { role: 'user', content: [{ ...text('question'), providerOptions: { anthropic: { cacheControl: { type: 'ephemeral', ttl: '1h' } } } }] },
    ];
    const body = convert({ messages: own, tools }, { automaticCaching: true });
    assert.equal(marks(body), 0, 'no ephemeral mark of the gateway');
    assert.match(JSON.stringify(body), /"cache_control":\{"type":"ephemeral","ttl":"1h"\}/);
    const topLevel = convert(
      { messages: loop(1), tools, passThrough: { format: 'anthropic', fields: { cache_control: { type: 'ephemeral' } } } },
      { automaticCaching: true },
    );
    assert.equal(marks(topLevel), 1, "Anthropic's own automatic caching, asked by the client");
    assert.equal(marks(convert({ messages: loop(3), tools })), 0);
  });

  test('skip thinking blocks, which cannot carry a breakpoint', () => {
    // An assistant turn that ends the conversation (a prefill), its signed thinking first.
    const messages: ChatMessage[] = [
      ...loop(1),
      { role: 'assistant', content: 'Done.', reasoning: [{ text: 'thought', providerOptions: { anthropic: { signature: 'sig' } } }] },
    ];
    const body = convert({ messages, tools }, { automaticCaching: true, reasoningEffort: 'low' });
    const last = body.messages.at(-1)!;
    assert.deepEqual(
      last.content.map((block) => [block.type, 'cache_control' in block]),
      [
        ['thinking', false],
        ['text', true],
      ],
    );
  });

  test("the minimum follows Anthropic's table per model", () => {
    assert.equal(minimumCacheableTokens('claude-sonnet-4-5-20250929'), 1_024);
    assert.equal(minimumCacheableTokens('claude-opus-4-5'), 4_096);
    assert.equal(minimumCacheableTokens('claude-haiku-4-5'), 4_096);
    assert.equal(minimumCacheableTokens('claude-sonnet-4-6'), 2_048);
    assert.equal(minimumCacheableTokens('claude-3-5-haiku-latest'), 2_048);
  });
});
