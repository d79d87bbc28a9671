import { beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import type { ModelConfig } from '../config/schema.ts';
import type { ChatMessage, ChatRequest, ToolDefinition } from '../canonical/chat-request.ts';
import { countTextTokens, TextTokenCache, textTokenCache, tokenizerWork } from './text-token-count.ts';
import { INPUT_MARGIN, PromptMeasure, TOOL_USE_OVERHEAD, type TokenCountingModel } from './token-estimate.ts';

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
    priceTiers: [],
    sources: { price: 'config', context_window: 'config', max_output_tokens: 'config', tools: 'config', vision: 'config', reasoning: 'config' },
  };
}

const model = modelWith(1_600);
const user = (text: string): ChatMessage => ({ role: 'user', content: [{ type: 'text', text }] });
const request = (messages: ChatMessage[], more: Partial<ChatRequest> = {}): ChatRequest => ({
  messages,
  passThrough: { format: 'openai', fields: {} },
  ...more,
});

// Each request's pipeline measures its own prompt; these measure a fresh one per call.
const estimate = (prompt: ChatRequest, on: TokenCountingModel) => new PromptMeasure(prompt).estimate(on);
const fairCount = (prompt: ChatRequest, on: TokenCountingModel) => new PromptMeasure(prompt).fairCount(on);
const fitsIn = (prompt: ChatRequest, on: TokenCountingModel, limit: number) => new PromptMeasure(prompt).fits(on, limit);

/** A copy with the same characters but another identity, as the next request's JSON.parse makes it. */
const copyOf = (text: string): string => JSON.parse(JSON.stringify(text)) as string;

const PROSE = 'The gateway holds the worst case before the first call and settles to the actual cost after it. ';
const BIG_TEXT = Array.from({ length: 2_000 }, (_, index) => `${PROSE}Line ${index}.`).join('\n');

beforeEach(() => {
  textTokenCache.clear();
  tokenizerWork.characters = 0;
});

describe('countTextTokens', () => {
  test('is the plain cl100k count, with no margin', async () => {
    assert.equal(await countTextTokens(''), 0);
    assert.equal(await countTextTokens('hello world'), 2);
    assert.equal(await countTextTokens(BIG_TEXT), countTokens(BIG_TEXT));
  });

  test('counts text that looks like a special token as ordinary text instead of throwing', async () => {
    assert.ok((await countTextTokens('end <|endoftext|> here')) > 3);
  });
});

describe('the text cache', () => {
  test('a big text is tokenized once; the same text again is a lookup', async () => {
    const first = await countTextTokens(BIG_TEXT);
    const tokenized = tokenizerWork.characters;
    assert.equal(await countTextTokens(copyOf(BIG_TEXT)), first);
    assert.equal(tokenizerWork.characters, tokenized, 'no tokenizer work on the second call');
  });

  test('a repeated conversation prefix costs only its new messages', async () => {
    const texts = Array.from({ length: 20 }, (_, index) => `${PROSE.repeat(5)} turn ${index}`);
    await fairCount(request(texts.slice(0, 19).map(user)), model);
    const before = tokenizerWork.characters;
    await fairCount(request(texts.map(copyOf).map(user)), model);
    assert.equal(tokenizerWork.characters - before, texts[19]!.length);
  });

  test('short texts are counted directly and not kept', async () => {
    await countTextTokens('a short question?');
    await countTextTokens('a short question?');
    assert.equal(textTokenCache.size, 0);
  });

  test('evicts the least recently used texts past its character budget', () => {
    const entryCost = 100 + TextTokenCache.ENTRY_OVERHEAD;
    const cache = new TextTokenCache(3 * entryCost, 10);
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((letter) => `${letter} `.repeat(50));
    for (const text of [a, b, c]) cache.remember(text!, 50);
    cache.get(a!); // a becomes the most recently used, b the oldest
    cache.remember(d!, 50);
    assert.equal(cache.size, 3);
    for (const kept of [a, c, d]) assert.equal(cache.get(kept!), 50);
    assert.equal(cache.get(b!), undefined, 'b was evicted');
  });

  test('never keeps a text larger than its whole budget, or shorter than its minimum', () => {
    const cache = new TextTokenCache(50, 10);
    cache.remember('x'.repeat(100), 13);
    cache.remember('short', 1);
    assert.equal(cache.size, 0);
  });
});

describe('PromptMeasure.estimate', () => {
  test('applies the margin to the tokenizer count, plus framing per message', async () => {
    const text = PROSE.repeat(20);
    const one = await estimate(request([user(text)]), model);
    assert.ok(one >= Math.ceil(countTokens(text) * INPUT_MARGIN), `${one} includes the margin`);
    assert.ok(one <= Math.ceil(countTokens(text) * INPUT_MARGIN) + 20, `${one} has only a few framing tokens`);
    const two = await estimate(request([user(text), { role: 'assistant', content: text }]), model);
    assert.ok(two >= 2 * Math.ceil(countTokens(text) * INPUT_MARGIN));
  });

  test('counts every image at the model maximum, whatever its size or detail', async () => {
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
      assert.equal((await estimate(twoImages, vision)) - (await estimate(sameWithoutImages, vision)), 2 * maxImageTokens);
    }
  });

  test('adds the tool-use prompt once, and each tool schema with the margin', async () => {
    const readFile: ToolDefinition = {
      name: 'read_file',
      description: 'Read a file of the workspace and return its text with line numbers.',
      parameters: { type: 'object', properties: { path: { type: 'string', description: 'Path from the root' } }, required: ['path'] },
    };
    const schemaTokens = countTokens(JSON.stringify(readFile));
    const bare = await estimate(request([user('hi')]), model);
    const one = await estimate(request([user('hi')], { tools: [readFile] }), model);
    const two = await estimate(request([user('hi')], { tools: [readFile, { ...readFile, name: 'read_other' }] }), model);
    assert.ok(one - bare >= TOOL_USE_OVERHEAD + Math.floor(schemaTokens * INPUT_MARGIN), `one tool adds ${one - bare}`);
    assert.ok(two - one < TOOL_USE_OVERHEAD, 'the tool-use prompt is counted once');
    assert.ok(two - one >= Math.floor(schemaTokens * INPUT_MARGIN));
  });

  test('counts tool calls of assistant messages and tool results', async () => {
    const argumentsText = JSON.stringify({ path: 'src/billing/token-estimate.ts', reason: PROSE.repeat(3) });
    const result = PROSE.repeat(10);
    const base = request([user('read it')]);
    const roundTrip = request([
      user('read it'),
      { role: 'assistant', content: null, toolCalls: [{ id: 'call_1', name: 'read_file', arguments: argumentsText }] },
      { role: 'tool', toolCallId: 'call_1', content: result },
    ]);
    const added = (await estimate(roundTrip, model)) - (await estimate(base, model));
    assert.ok(added >= (countTokens(argumentsText) + countTokens(result)) * INPUT_MARGIN, `round trip adds ${added}`);
  });

  test('counts a structured-output schema', async () => {
    const schema = { type: 'object', properties: { verdict: { type: 'string' } } };
    const plain = await estimate(request([user('judge')]), model);
    const structured = await estimate(request([user('judge')], { responseFormat: { type: 'json_schema', name: 'answer', schema } }), model);
    assert.ok(structured - plain >= countTokens(JSON.stringify(schema)));
  });

  test('measures a prompt once, however many candidate models it is estimated for', async () => {
    const small = new PromptMeasure(request([user('Which of the candidates is cheapest? '.repeat(4))]));
    const first = await small.estimate(model);
    const tokenized = tokenizerWork.characters;
    assert.equal(await small.estimate(modelWith(1_600)), first);
    await small.estimate(modelWith(3_000));
    assert.equal(tokenizerWork.characters, tokenized);
  });
});

describe('bounds before counting', () => {
  test('until counted, the ceiling is the UTF-8 bytes: never below the counted bound', async () => {
    for (const text of [PROSE.repeat(20), 'a'.repeat(5_000), '漢字かな交じり文'.repeat(300), '😀🎉'.repeat(500), ' \n\t'.repeat(900)]) {
      const fresh = new PromptMeasure(request([user(text)]));
      const ceiling = fresh.ceiling(model);
      assert.ok(ceiling >= Buffer.byteLength(text), 'the byte bound');
      const counted = await fresh.estimate(model);
      assert.ok(counted <= ceiling, `counting never raises the bound (${counted} > ${ceiling})`);
      assert.ok((await fresh.fairCount(model)) <= counted);
      assert.equal(fresh.ceiling(model), counted, 'the ceiling is the counted bound once counted');
    }
  });

  test('a prompt whose bytes fit is admitted without the tokenizer', async () => {
    const fits = await fitsIn(request([user(PROSE.repeat(10))]), model, 2_000);
    assert.deepEqual({ fits: fits.fits, bound: fits.bound }, { fits: true, bound: true });
    assert.equal(tokenizerWork.characters, 0);
  });

  test('a prompt whose lower bound is too large is refused without the tokenizer', async () => {
    const fits = await fitsIn(request([user('漢'.repeat(100_000))]), model, 10_000);
    assert.equal(fits.fits, false);
    assert.ok(fits.bound && fits.tokens > 10_000);
    assert.equal(tokenizerWork.characters, 0);
  });

  test('between the bounds, the count decides, and stops once past the limit', async () => {
    const text = PROSE.repeat(500);
    const exact = countTokens(text);
    const inside = await fitsIn(request([user(text)]), model, exact + 100);
    assert.deepEqual({ fits: inside.fits, bound: inside.bound }, { fits: true, bound: false });
    tokenizerWork.characters = 0;
    const outside = await fitsIn(request([user(text)]), model, Math.floor(exact / 4));
    assert.equal(outside.fits, false);
    assert.ok(tokenizerWork.characters < text.length / 2, 'stopped early');
  });
});

test('the fair count is the bound without its margin, for billing cut-short requests', async () => {
  const text = 'The quick brown fox jumps over the lazy dog. '.repeat(40);
  const fair = await fairCount(request([user(text)]), model);
  const bound = await estimate(request([user(text)]), model);
  assert.ok(fair >= countTokens(text));
  assert.ok(fair < bound);
  assert.equal(bound - fair, Math.ceil(countTokens(text) * 1.35) - countTokens(text));
});
