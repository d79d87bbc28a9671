import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';
import { countTexts, type Encoding } from './text-token-count.ts';
import { openAIChatPieces, openAIEncodingFor, type CountedMessage, type CountedTool } from './openai-chat-count.ts';

/**
 * The example conversations of OpenAI's cookbook "How to count tokens with tiktoken" and the
 * prompt_tokens the API reported for them, as the cookbook publishes them: 129 (gpt-3.5-turbo,
 * gpt-4) and 124 (gpt-4o, gpt-4o-mini) for the jargon translator; 105 and 101 with the weather tool.
 */
const jargon: CountedMessage[] = [
  { role: 'system', content: ['You are a helpful, pattern-following assistant that translates corporate jargon into plain English.'] },
  { role: 'system', name: 'example_user', content: ['New synergies will help drive top-line growth.'] },
  { role: 'system', name: 'example_assistant', content: ['Things working well together will increase revenue.'] },
  {
    role: 'system',
    name: 'example_user',
    content: ["Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage."],
  },
  { role: 'system', name: 'example_assistant', content: ["Let's talk later when we're less busy about how to do better."] },
  { role: 'user', content: ["This late pivot means we don't have time to boil the ocean for the client deliverable."] },
];

const weather: CountedMessage[] = [
  { role: 'system', content: ['You are a helpful assistant that can answer to questions about the weather.'] },
  { role: 'user', content: ["What's the weather like in San Francisco?"] },
];

const weatherTool: CountedTool = {
  name: 'get_current_weather',
  description: 'Get the current weather in a given location',
  parameters: {
    type: 'object',
    properties: {
      location: { type: 'string', description: 'The city and state, e.g. San Francisco, CA' },
      unit: { type: 'string', description: 'The unit of temperature to return', enum: ['celsius', 'fahrenheit'] },
    },
    required: ['location'],
  },
};

async function count(messages: CountedMessage[], tools: CountedTool[], encoding: Encoding): Promise<number> {
  const pieces = openAIChatPieces(messages, tools, encoding);
  return (await countTexts(pieces.texts, Infinity, undefined, encoding)).tokens + pieces.framing;
}

describe("the chat format's count, against the cookbook's published figures", () => {
  for (const [model, messagesOnly, withTool] of [
    ['gpt-3.5-turbo', 129, 105],
    ['gpt-4', 129, 105],
    ['gpt-4o', 124, 101],
    ['gpt-4o-mini', 124, 101],
  ] as const) {
    test(`${model}: ${messagesOnly} for the messages, ${withTool} with a tool`, async () => {
      const encoding = openAIEncodingFor(model)!;
      assert.equal(await count(jargon, [], encoding), messagesOnly);
      assert.equal(await count(weather, [weatherTool], encoding), withTool);
    });
  }

  test('o200k counts of long texts cut into chunks equal the tokenizer run over them whole', async () => {
    const plain = { disallowedSpecial: new Set<string>() };
    const texts = [
      readFileSync(new URL('./token-estimate.ts', import.meta.url), 'utf8'),
      readFileSync(new URL('../../README.md', import.meta.url), 'utf8'),
      ' Überprüfung der Größe, naïve café. '.repeat(300),
    ];
    for (const text of texts) assert.equal((await countTexts([text], Infinity, undefined, 'o200k_base')).tokens, countO200k(text, plain));
    // Runs with no word boundary are cut every 128 characters, as for cl100k: at most a token above per cut.
    for (const run of ['お誕生日おめでとう。'.repeat(400), `${'x'.repeat(1_000)}\n\n${' '.repeat(700)}}\n{\t${'ab '.repeat(2_000)}`]) {
      const counted = (await countTexts([run], Infinity, undefined, 'o200k_base')).tokens;
      const exact = countO200k(run, plain);
      assert.ok(counted >= exact && counted <= exact + Math.ceil(run.length / 128), `${counted} for ${exact}`);
    }
  });

  test('the tokenizer by model name: o200k_base for current OpenAI models, cl100k_base for older ones, none for others', () => {
    for (const name of ['gpt-4o-2024-08-06', 'gpt-4.1-mini', 'gpt-5', 'o3-mini', 'o4-mini', 'openai/gpt-4o', 'gpt-oss-120b']) {
      assert.equal(openAIEncodingFor(name), 'o200k_base', name);
    }
    for (const name of ['gpt-4-0613', 'gpt-4-turbo', 'gpt-3.5-turbo-0125']) assert.equal(openAIEncodingFor(name), 'cl100k_base', name);
    for (const name of ['claude-sonnet-4-5', 'llama-3.3-70b', 'alpha', 'omni-1']) assert.equal(openAIEncodingFor(name), undefined, name);
  });
});
