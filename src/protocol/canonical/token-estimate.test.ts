import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import type { ModelConfig } from '../../config/schema.ts';
import type { ChatMessage, ChatRequest, ToolDefinition } from './chat-request.ts';
import { estimateInputTokens, estimateTextTokens, INPUT_MARGIN, TextTokenCache, textTokenCache, TOOL_USE_OVERHEAD } from './token-estimate.ts';

function modelWith(maxImageTokens: number): ModelConfig {
  return {
    id: 'test/model',
    provider: 'test',
    upstream: 'model',
    price: { inputNanoPerMillion: 1, cachedInputNanoPerMillion: 1, cacheWriteNanoPerMillion: 1, outputNanoPerMillion: 1 },
    contextWindow: 200_000,
    maxOutputTokens: 8_192,
    maxImageTokens,
    capabilities: { tools: true, vision: true, reasoning: false },
  };
}

const model = modelWith(1_600);
const user = (text: string): ChatMessage => ({ role: 'user', content: [{ type: 'text', text }] });
const request = (messages: ChatMessage[], more: Partial<ChatRequest> = {}): ChatRequest => ({
  messages,
  passThrough: { format: 'openai', fields: {} },
  ...more,
});

/** A copy with the same characters but another identity, as the next request's JSON.parse makes it. */
const copyOf = (text: string): string => JSON.parse(JSON.stringify(text)) as string;

const PROSE = 'The gateway holds the worst case before the first call and settles to the actual cost after it. ';
const BIG_TEXT = Array.from({ length: 2_000 }, (_, index) => `${PROSE}Line ${index}.`).join('\n');

beforeEach(() => textTokenCache.clear());

describe('estimateTextTokens', () => {
  test('is the plain cl100k count, with no margin', () => {
    assert.equal(estimateTextTokens(''), 0);
    assert.equal(estimateTextTokens('hello world'), 2);
    assert.equal(estimateTextTokens(BIG_TEXT), countTokens(BIG_TEXT));
  });

  test('counts text that looks like a special token as ordinary text instead of throwing', () => {
    assert.ok(estimateTextTokens('end <|endoftext|> here') > 3);
  });
});

describe('the text cache', () => {
  test('a big text is tokenized once; the same text again is a lookup', () => {
    const first = estimateTextTokens(BIG_TEXT);
    const tokenized = textTokenCache.tokenizedCharacters;
    assert.equal(tokenized, BIG_TEXT.length);
    assert.equal(estimateTextTokens(copyOf(BIG_TEXT)), first);
    assert.equal(textTokenCache.tokenizedCharacters, tokenized, 'no tokenizer work on the second call');
  });

  test('a repeated conversation prefix costs only its new messages', () => {
    const texts = Array.from({ length: 20 }, (_, index) => `${PROSE.repeat(5)} turn ${index}`);
    estimateInputTokens(request(texts.slice(0, 19).map(user)), model);
    const before = textTokenCache.tokenizedCharacters;
    estimateInputTokens(request(texts.map(copyOf).map(user)), model);
    assert.equal(textTokenCache.tokenizedCharacters - before, texts[19]!.length);
  });

  test('short texts are counted directly and not kept', () => {
    estimateTextTokens('a short question?');
    estimateTextTokens('a short question?');
    assert.equal(textTokenCache.size, 0);
    assert.equal(textTokenCache.tokenizedCharacters, 2 * 'a short question?'.length);
  });

  test('evicts the least recently used texts past its character budget', () => {
    const entryCost = 100 + TextTokenCache.ENTRY_OVERHEAD;
    const cache = new TextTokenCache(3 * entryCost, 10);
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((letter) => `${letter} `.repeat(50));
    for (const text of [a, b, c]) cache.count(text!);
    cache.count(a!); // a becomes the most recently used, b the oldest
    cache.count(d!);
    assert.equal(cache.size, 3);
    const tokenized = cache.tokenizedCharacters;
    cache.count(a!);
    cache.count(c!);
    cache.count(d!);
    assert.equal(cache.tokenizedCharacters, tokenized, 'a, c and d stayed');
    cache.count(b!);
    assert.equal(cache.tokenizedCharacters, tokenized + 100, 'b was evicted');
  });

  test('never keeps a text larger than its whole budget', () => {
    const cache = new TextTokenCache(50, 10);
    cache.count('x'.repeat(100));
    assert.equal(cache.size, 0);
  });
});

describe('estimateInputTokens', () => {
  test('applies the margin to the tokenizer count, plus framing per message', () => {
    const text = PROSE.repeat(20);
    const one = estimateInputTokens(request([user(text)]), model);
    assert.ok(one >= Math.ceil(countTokens(text) * INPUT_MARGIN), `${one} includes the margin`);
    assert.ok(one <= Math.ceil(countTokens(text) * INPUT_MARGIN) + 20, `${one} has only a few framing tokens`);
    const two = estimateInputTokens(request([user(text), { role: 'assistant', content: text }]), model);
    assert.ok(two >= 2 * Math.ceil(countTokens(text) * INPUT_MARGIN));
  });

  test('counts every image at the model maximum, whatever its size or detail', () => {
    const image = (detail?: 'low'): ChatMessage => ({
      role: 'user',
      content: [
        { type: 'text', text: 'what is this?' },
        { type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=', detail },
      ],
    });
    const twoImages = request([image(), image('low')]);
    const sameWithoutImages = request([user('what is this?'), user('what is this?')]);
    for (const maxImageTokens of [1_600, 6_000]) {
      const vision = modelWith(maxImageTokens);
      assert.equal(estimateInputTokens(twoImages, vision) - estimateInputTokens(sameWithoutImages, vision), 2 * maxImageTokens);
    }
  });

  test('adds the tool-use prompt once, and each tool schema with the margin', () => {
    const readFile: ToolDefinition = {
      name: 'read_file',
      description: 'Read a file of the workspace and return its text with line numbers.',
      parameters: { type: 'object', properties: { path: { type: 'string', description: 'Path from the root' } }, required: ['path'] },
    };
    const schemaTokens = countTokens(JSON.stringify(readFile));
    const bare = estimateInputTokens(request([user('hi')]), model);
    const one = estimateInputTokens(request([user('hi')], { tools: [readFile] }), model);
    const two = estimateInputTokens(request([user('hi')], { tools: [readFile, { ...readFile, name: 'read_other' }] }), model);
    assert.ok(one - bare >= TOOL_USE_OVERHEAD + Math.floor(schemaTokens * INPUT_MARGIN), `one tool adds ${one - bare}`);
    assert.ok(two - one < TOOL_USE_OVERHEAD, 'the tool-use prompt is counted once');
    assert.ok(two - one >= Math.floor(schemaTokens * INPUT_MARGIN));
  });

  test('counts tool calls of assistant messages and tool results', () => {
    const argumentsText = JSON.stringify({ path: 'src/billing/token-estimate.ts', reason: PROSE.repeat(3) });
    const result = PROSE.repeat(10);
    const base = request([user('read it')]);
    const roundTrip = request([
      user('read it'),
      { role: 'assistant', content: null, toolCalls: [{ id: 'call_1', name: 'read_file', arguments: argumentsText }] },
      { role: 'tool', toolCallId: 'call_1', content: result },
    ]);
    const added = estimateInputTokens(roundTrip, model) - estimateInputTokens(base, model);
    assert.ok(added >= (countTokens(argumentsText) + countTokens(result)) * INPUT_MARGIN, `round trip adds ${added}`);
  });

  test('counts a structured-output schema', () => {
    const schema = { type: 'object', properties: { verdict: { type: 'string' } } };
    const plain = estimateInputTokens(request([user('judge')]), model);
    const structured = estimateInputTokens(request([user('judge')], { responseFormat: { type: 'json_schema', name: 'answer', schema } }), model);
    assert.ok(structured - plain >= countTokens(JSON.stringify(schema)));
  });

  test('measures a request once, however many candidate models it is estimated for', () => {
    const small = request([user('Which of the candidates is cheapest?')]);
    const first = estimateInputTokens(small, model);
    const tokenized = textTokenCache.tokenizedCharacters;
    assert.equal(estimateInputTokens(small, modelWith(1_600)), first);
    estimateInputTokens(small, modelWith(3_000));
    assert.equal(textTokenCache.tokenizedCharacters, tokenized);
  });

  test('a small request is counted directly and caches nothing', () => {
    const small = request([{ role: 'system', content: 'Be brief.' }, user('What is the capital of France?')]);
    estimateInputTokens(small, model);
    assert.equal(textTokenCache.size, 0, 'nothing cached for short texts');
    assert.ok(textTokenCache.tokenizedCharacters < 64);
  });
});

test('the fair count is the bound without its margin, for billing cut-short requests', async () => {
  const { countInputTokens, estimateInputTokens, estimateTextTokens } = await import('./token-estimate.ts');
  const text = 'The quick brown fox jumps over the lazy dog. '.repeat(40);
  const request = {
    messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text }] }],
    passThrough: { format: 'openai' as const, fields: {} },
  };
  const model = { maxImageTokens: 1600 } as Parameters<typeof countInputTokens>[1];
  const fair = countInputTokens(request, model);
  const bound = estimateInputTokens(request, model);
  assert.ok(fair >= estimateTextTokens(text));
  assert.ok(fair < bound);
  assert.equal(bound - fair, Math.ceil(estimateTextTokens(text) * 1.35) - estimateTextTokens(text));
});
