import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../config/load-config.ts';
import type { StreamPart } from '../../canonical/stream-part.ts';
import type { ProviderCall } from '../provider.ts';
import { ProviderError } from '../provider-error.ts';
import { createSimulatedProvider } from './simulated-provider.ts';

const config = parseConfig(
  `
providers:
  - id: sim
    kind: simulated
    simulated:
      latency_ms: 5
      tokens_per_second: 2000
      script:
        - { match: weather, tool_call: { name: get_weather, arguments: { city: Oslo } } }
        - { match: broken, fail: rate_limited }
        - { match: flaky, reply: "one two three four five six seven eight nine ten", fail: unavailable, fail_after_chunks: 1 }
        - { match: greet, reply: "Hello there, friend." }
        - { match: "scripted talk", replies: ["first answer", "second answer"] }
models:
  - { id: sim/a, provider: sim, price: { input: 1, output: 2 }, context_window: 1000, max_output_tokens: 100, capabilities: { tools: true, reasoning: true } }
aliases:
  svc/fast: { candidates: [sim/a], reasoning: low }
  svc/balanced: { candidates: [sim/a], reasoning: medium }
  svc/best: { candidates: [sim/a], reasoning: xhigh }
`,
  'test',
  {},
);
const provider = createSimulatedProvider(config.providers[0]!);
const model = config.models[0]!;

function call(text: string, extra: Partial<ProviderCall> = {}): ProviderCall {
  return {
    request: {
      messages: [{ role: 'user', content: [{ type: 'text', text }] }],
      tools: [{ name: 'get_weather' }],
      passThrough: { format: 'openai', fields: {} },
    },
    model,
    maxOutputTokens: 100,
    signal: new AbortController().signal,
    ...extra,
  };
}

async function collect(parts: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const collected: StreamPart[] = [];
  for await (const part of parts) collected.push(part);
  return collected;
}

test('scripted replies, streamed and not, with usage', async () => {
  const result = await provider.generate(call('greet me'));
  assert.equal(result.content, 'Hello there, friend.');
  assert.equal(result.finishReason, 'stop');
  assert.equal(result.usage!.outputTokens, 3);
  const parts = await collect(provider.stream(call('greet me')));
  assert.equal(parts.map((part) => (part.type === 'text-delta' ? part.text : '')).join(''), 'Hello there, friend.');
  assert.deepEqual(parts.at(-1), { type: 'finish', finishReason: 'stop', usage: result.usage });
});

test('scripted tool calls when the tool was offered', async () => {
  const result = await provider.generate(call('weather in Oslo?'));
  assert.equal(result.finishReason, 'tool_calls');
  assert.deepEqual(
    result.toolCalls.map(({ name, arguments: args }) => ({ name, args })),
    [{ name: 'get_weather', args: '{"city":"Oslo"}' }],
  );
});

test('reasoning when asked, counted as output', async () => {
  const result = await provider.generate(call('greet', { reasoningEffort: 'low' }));
  assert.ok(result.reasoning);
  assert.ok(result.usage!.reasoningTokens > 0);
  assert.equal(result.usage!.outputTokens, result.usage!.reasoningTokens + 3);
});

test('failures before and during a stream', async () => {
  await assert.rejects(provider.generate(call('broken')), (error) => error instanceof ProviderError && error.failure === 'rate_limited');
  const parts: StreamPart[] = [];
  await assert.rejects(
    (async () => {
      for await (const part of provider.stream(call('flaky'))) parts.push(part);
    })(),
    (error) => error instanceof ProviderError && error.failure === 'unavailable',
  );
  assert.equal(parts.length, 1, 'one piece before the failure');
});

test('the output cap cuts the answer with finish reason length', async () => {
  const result = await provider.generate(call('greet', { maxOutputTokens: 2 }));
  assert.equal(result.content, 'Hello there, ');
  assert.equal(result.finishReason, 'length');
});

test('an abort stops it as cancelled', async () => {
  const controller = new AbortController();
  const pending = provider.generate(call('greet', { signal: controller.signal }));
  controller.abort();
  await assert.rejects(pending, (error) => error instanceof ProviderError && error.failure === 'cancelled');
});

test('replies: a scripted conversation answers by turn, matched on its first user message', async () => {
  const first = call('please, scripted talk');
  assert.equal((await provider.generate(first)).content, 'first answer');
  const turns = (assistantTurns: number): ProviderCall => ({
    ...first,
    request: {
      ...first.request,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'please, scripted talk' }] },
        ...Array.from({ length: assistantTurns }, () => [
          { role: 'assistant' as const, content: 'earlier' },
          { role: 'user' as const, content: [{ type: 'text' as const, text: 'that did not work' }] },
        ]).flat(),
      ],
    },
  });
  assert.equal((await provider.generate(turns(1))).content, 'second answer');
  assert.equal((await provider.generate(turns(3))).content, 'second answer', 'the last reply answers every later turn');
});
