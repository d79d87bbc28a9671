import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { startHarness, sseData, type Harness } from './helpers/gateway-harness.ts';

/** Anthropic's signed and redacted thinking: back to the Anthropic model unchanged, never shown to an OpenAI-format client. */

const SIGNATURE = 'EqQBCkgIAxABGAIiQHn0sNs+signed+by+the+fake';
const REDACTED = 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP';
const tools = [{ name: 'get_weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }];
const ask = { role: 'user' as const, content: 'Weather in Paris?' };
const thinks = {
  reasoning: 'Need the weather.',
  signature: SIGNATURE,
  redactedThinking: REDACTED,
  toolCalls: [{ id: 'toolu_r1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
};

let harness: Harness;

before(async () => {
  harness = await startHarness();
});
after(() => harness.close());
beforeEach(() => harness.fake.reset());

describe('an Anthropic-format client', () => {
  const client = () => new Anthropic({ baseURL: harness.gateway.url, apiKey: harness.key, maxRetries: 0 });
  const params = { model: 'anth/claude', max_tokens: 4_000, tools, thinking: { type: 'enabled' as const, budget_tokens: 2_000 } };

  for (const streamed of [false, true]) {
    test(`gets signed and redacted thinking ${streamed ? 'streamed' : 'in one message'}, and its next turn sends them back byte for byte`, async () => {
      harness.fake.script('claude-x', { ...thinks, chunkSize: 5 }, { text: 'Sunny.' });
      const first = streamed
        ? await client()
            .messages.stream({ ...params, messages: [ask] })
            .finalMessage()
        : await client().messages.create({ ...params, messages: [ask] });
      const expected = [
        { type: 'thinking', thinking: 'Need the weather.', signature: SIGNATURE },
        { type: 'redacted_thinking', data: REDACTED },
        { type: 'tool_use', id: 'toolu_r1', name: 'get_weather', input: { city: 'Paris' } },
      ];
      assert.deepEqual(first.content, expected);

      const toolResult = { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_r1', content: 'sunny' }] };
      const second = await client().messages.create({ ...params, messages: [ask, { role: 'assistant', content: first.content }, toolResult] });
      assert.deepEqual(second.content, [{ type: 'text', text: 'Sunny.' }]);
      const sent = harness.fake.requests[1]!;
      const assistantTurn = JSON.stringify((sent.body as any).messages[1]);
      assert.equal(assistantTurn, JSON.stringify({ role: 'assistant', content: expected }), 'the blocks, in order, as Anthropic handed them out');
      assert.deepEqual((sent.body as any).thinking, params.thinking, 'thinking stays on in the signed tool loop');
    });
  }
});

describe('an OpenAI-format client answered by the Anthropic model', () => {
  function assertHidden(text: string): void {
    assert.ok(!text.includes(SIGNATURE), 'no signature');
    assert.ok(!text.includes(REDACTED), 'no redacted data');
    assert.ok(!/signature|redacted/.test(text), 'no field for them either');
  }

  test('chat completions, non-streaming and streaming: the reasoning text, nothing of Anthropic', async () => {
    harness.fake.script('claude-x', thinks, { ...thinks, chunkSize: 4 });
    const body = { model: 'anth/claude', messages: [ask], reasoning_effort: 'low', tools: [{ type: 'function', function: { name: 'get_weather' } }] };
    const whole = await harness.post('/v1/chat/completions', body);
    assert.equal(whole.status, 200);
    const text = await whole.text();
    assertHidden(text);
    assert.equal(JSON.parse(text).choices[0].message.reasoning_content, 'Need the weather.');

    const streamed = await (await harness.post('/v1/chat/completions', { ...body, stream: true })).text();
    assertHidden(streamed);
    const reasoning = sseData(streamed)
      .filter((data) => data !== '[DONE]')
      .map((data) => JSON.parse(data).choices[0]?.delta?.reasoning_content ?? '')
      .join('');
    assert.equal(reasoning, 'Need the weather.');
  });

  test('responses, non-streaming and streaming, with a reasoning summary', async () => {
    harness.fake.script('claude-x', thinks, thinks);
    const body = { model: 'anth/claude', input: 'Weather in Paris?', reasoning: { effort: 'low', summary: 'auto' } };
    const whole = await harness.post('/v1/responses', body);
    assert.equal(whole.status, 200);
    const text = await whole.text();
    assertHidden(text);
    assert.ok(text.includes('Need the weather.'), 'the reasoning as a summary');
    const streamed = await (await harness.post('/v1/responses', { ...body, stream: true })).text();
    assertHidden(streamed);
    assert.ok(streamed.includes('Need the weather.'));
  });
});
