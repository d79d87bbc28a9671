import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { StreamPart } from '../../canonical/stream-part.ts';
import { ChatChunkEncoder } from './chat-chunk-encoder.ts';
import type { SseEvent } from '../sse/parse-sse.ts';
import { OpenAIStreamState } from './convert-from-openai-chunks.ts';
import type { OpenAIChatCompletion } from './openai-chat-wire-types.ts';
import { OpenAIChunkReader } from './parse-openai-chunks.ts';
import { RepeatedChunkShape } from './repeated-chunk-shape.ts';

const envelope = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', system_fingerprint: 'fp_1' };
const textChunk = (content: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ ...envelope, ...extra, choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }] });
const event = (data: string, name?: string): SseEvent => (name === undefined ? { data } : { data, event: name });
const learned = (data: string) => RepeatedChunkShape.learn(event(data), JSON.parse(data) as OpenAIChatCompletion);

test('a text delta with the bytes of the one learned around it is read by its text alone', () => {
  const shape = learned(textChunk('Hello'));
  assert.ok(shape);
  for (const text of [' there', '"quoted"', 'back\\slash', 'line\nbreak', 'é ü 中文 🎉', '\u0000', 'Hello']) {
    assert.deepEqual(shape.text(event(textChunk(text))), { text, json: JSON.stringify(text) }, text);
  }
  // The same text escaped otherwise is still one JSON string in the same place.
  assert.deepEqual(shape.text(event(textChunk('Hello').replace('"Hello"', '"H\\u0065llo"'))), { text: 'Hello', json: '"H\\u0065llo"' });
});

test('anything but the learned bytes around one JSON string is left to JSON.parse', () => {
  const shape = learned(textChunk('Hello'))!;
  const misses = [
    event(textChunk('x'), 'error'),
    event(textChunk('x', { obfuscation: 'abc' })),
    event(textChunk('x').replace('"x"', '"a","role":"b"')),
    event(textChunk('x').replace('"x"', '12')),
    event(textChunk('x').replace('"x"', 'null')),
    event(textChunk('x').replace('"x"', '"unterminated')),
    event(JSON.stringify({ ...envelope, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }] })),
  ];
  for (const miss of misses) assert.equal(shape.text(miss), undefined, miss.data);
});

test('only a plain text delta whose text sits once in its bytes is learned', () => {
  const notLearned = [
    // The role chunk, a finish, usage, two choices, a second delta field, empty text.
    JSON.stringify({ ...envelope, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }),
    JSON.stringify({ ...envelope, choices: [{ index: 0, delta: { content: 'a' }, finish_reason: 'stop' }] }),
    textChunk('a', { usage: { prompt_tokens: 1, completion_tokens: 1 } }),
    JSON.stringify({
      ...envelope,
      choices: [
        { index: 0, delta: { content: 'a' } },
        { index: 1, delta: { content: 'b' } },
      ],
    }),
    JSON.stringify({ ...envelope, choices: [{ index: 0, delta: { content: 'a', reasoning_content: 'r' }, finish_reason: null }] }),
    // The text is also the model's name: where it sits is ambiguous.
    textChunk('gpt-4o-mini'),
    // Escaped otherwise, its JSON.stringify form is found only in the model's name: the probe lands there.
    JSON.stringify({ ...envelope, model: 'Hello', choices: [{ index: 0, delta: { content: 'Hello' }, finish_reason: null }] }).replace(
      '"content":"Hello"',
      '"content":"H\\u0065llo"',
    ),
  ];
  for (const data of notLearned) assert.equal(learned(data), undefined, data);
  // A duplicate key: JSON.parse keeps the last one, and that is where the text is read.
  const duplicate = (last: string) => textChunk('Hello').replace('"content":"Hello"', `"content":"Hello","content":${JSON.stringify(last)}`);
  assert.equal(learned(duplicate('Bye'))?.text(event(duplicate('Ciao')))?.text, 'Ciao');
  assert.equal(RepeatedChunkShape.learn(event(textChunk('a'), 'message'), JSON.parse(textChunk('a'))), undefined, 'an event with a name');
});

/**
 * Parts from events as the provider reads them (a text delta by its text alone when it can, as
 * openai-compatible-provider.ts does), and as JSON.parse of every event gives them. Each part that
 * carries its JSON string is checked against its text and dropped of it, and so is its chunk for
 * the client: the same JSON as the chunk encoded from the text alone.
 */
function partsBoth(events: SseEvent[]): [StreamPart[], StreamPart[]] {
  const reader = new OpenAIChunkReader();
  const state = new OpenAIStreamState();
  const reference = new OpenAIStreamState();
  const encoder = new ChatChunkEncoder('chatcmpl-gw', 1, 'up/model');
  const read: StreamPart[] = [];
  const parsed: StreamPart[] = [];
  for (const one of events) {
    const delta = reader.textDelta(one);
    if (delta !== undefined) {
      assert.equal(JSON.parse(delta.json), delta.text);
      if (delta.text !== '') {
        const { json: _json, ...part } = delta;
        assert.deepEqual(JSON.parse(encoder.part(delta).slice('data: '.length)), JSON.parse(encoder.part(part).slice('data: '.length)));
        read.push(part);
      }
    } else {
      const chunk = reader.read(one);
      if (chunk) read.push(...state.accept(chunk));
    }
    parsed.push(...reference.accept(JSON.parse(one.data) as OpenAIChatCompletion));
  }
  return [read, parsed];
}

test('a text delta read by its text alone keeps the JSON string the provider wrote, and its chunk for the client writes it as it is', () => {
  const reader = new OpenAIChunkReader();
  assert.equal(reader.textDelta(event(textChunk('Hello'))), undefined, 'nothing learned yet');
  assert.ok(reader.read(event(textChunk('Hello'))));
  const escaped = textChunk('Hello').replace('"Hello"', '"H\\u00e9llo \\/"');
  const delta = reader.textDelta(event(escaped));
  assert.deepEqual(delta, { type: 'text-delta', text: 'Héllo /', json: '"H\\u00e9llo \\/"' });
  const chunk = new ChatChunkEncoder('chatcmpl-gw', 1, 'up/model').part(delta!);
  assert.ok(chunk.includes('"delta":{"content":"H\\u00e9llo \\/"}'), chunk);
  assert.equal(JSON.parse(chunk.slice('data: '.length)).choices[0].delta.content, 'Héllo /');
  assert.equal(reader.read(event('[DONE]')), undefined);
  assert.equal(reader.textDelta(event(escaped)), undefined, 'nothing after [DONE]');
});

test('property: a stream reads to the parts JSON.parse of every event gives', () => {
  const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('gpt-4o-mini', 'chatcmpl-1', 'Hello', '"', '\\', ''));
  const chunk = fc.oneof(
    { weight: 6, arbitrary: text.map((content) => textChunk(content)) },
    { weight: 1, arbitrary: fc.tuple(text, fc.string()).map(([content, pad]) => textChunk(content, { obfuscation: pad })) },
    {
      weight: 1,
      arbitrary: text.map((content) => JSON.stringify({ ...envelope, choices: [{ index: 0, delta: { content }, finish_reason: 'stop' }] })),
    },
    {
      weight: 1,
      arbitrary: text.map((model) => JSON.stringify({ ...envelope, model, choices: [{ index: 0, delta: { content: model }, finish_reason: null }] })),
    },
    { weight: 1, arbitrary: text.map((content) => textChunk(content).replace(/"content":"/, '"content" : "')) },
    {
      weight: 1,
      arbitrary: fc.nat(1000).map((tokens) => JSON.stringify({ ...envelope, choices: [], usage: { prompt_tokens: tokens, completion_tokens: 3 } })),
    },
  );
  fc.assert(
    fc.property(fc.array(chunk, { maxLength: 30 }), (datas) => {
      const [read, parsed] = partsBoth(datas.map((data) => event(data)));
      assert.deepEqual(read, parsed);
    }),
    { seed: Number(process.env.FUZZ_SEED ?? 20261127), numRuns: Number(process.env.FUZZ_RUNS ?? 300) },
  );
});

const GATEWAY_HEAD = '{"id":"chatcmpl-gw","object":"chat.completion.chunk","created":7,"model":"up/alpha",';
const relayedChunk = (shape: RepeatedChunkShape, data: string) => {
  const read = shape.text(event(data))!;
  const relayed = shape.relayed(read.json, GATEWAY_HEAD)!;
  assert.ok(relayed.startsWith('data: ') && relayed.endsWith('\n\n'), relayed);
  return JSON.parse(relayed.slice('data: '.length)) as Record<string, unknown>;
};

test('a relayed text delta is the gateway head and the provider choices byte for byte, whatever else the chunk carries', () => {
  const layouts: Array<[string, (content: string) => string]> = [
    // OpenAI with include_usage: a usage: null on every chunk, which a client that did not ask must not see.
    ['openai', (content) => textChunk(content, {}).replace(/}$/, ',"usage":null}')],
    // OpenRouter: its own provider field before choices and a choice field of its own.
    [
      'openrouter',
      (content) =>
        JSON.stringify({
          id: 'gen-1',
          provider: 'OpenAI',
          model: 'openai/gpt-4o',
          object: 'chat.completion.chunk',
          created: 1,
          choices: [{ index: 0, delta: { content }, finish_reason: null, native_finish_reason: null, logprobs: null }],
          system_fingerprint: 'fp_1',
        }),
    ],
    // llama.cpp: choices first, the id and model after them.
    [
      'llama.cpp',
      (content) =>
        JSON.stringify({
          choices: [{ finish_reason: null, index: 0, delta: { content } }],
          created: 1,
          id: 'chatcmpl-x',
          model: 'local',
          object: 'chat.completion.chunk',
        }),
    ],
  ];
  for (const [name, chunk] of layouts) {
    const shape = learned(chunk('Hello'))!;
    for (const text of [' there', '"quoted" \\ é 🎉']) {
      const relayed = relayedChunk(shape, chunk(text));
      const upstream = JSON.parse(chunk(text)) as Record<string, unknown>;
      assert.deepEqual(
        relayed,
        { id: 'chatcmpl-gw', object: 'chat.completion.chunk', created: 7, model: 'up/alpha', choices: upstream.choices },
        name,
      );
      // Byte for byte: the provider's choices text is in the relayed event as it sent it.
      const choicesText = chunk(text).match(/"choices":\[.*?\](?=[,}])/)![0];
      assert.ok(shape.relayed(JSON.stringify(text), GATEWAY_HEAD)!.includes(choicesText), name);
    }
  }
});
