import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ChatAnthropic } from '@langchain/anthropic';
import { AIMessageChunk } from '@langchain/core/messages';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';

/** The data of every event of a streamed body, by event name. */
function events(text: string): Array<{ event: string; data: any }> {
  return text
    .split('\n\n')
    .filter((block) => block.includes('data: '))
    .map((block) => {
      const event = /^event: (.+)$/m.exec(block)?.[1] ?? 'message';
      const data = /^data: (.+)$/m.exec(block)![1]!;
      return { event, data: data === '[DONE]' ? data : JSON.parse(data) };
    });
}

describe('usage where streaming clients read it', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness();
  });
  after(() => harness.close());

  async function receipt(response: Response): Promise<any> {
    return JSON.parse(await (await harness.get(`/v1/receipts/${response.headers.get('x-svc-receipt-id')}`)).text());
  }

  const messages = (model: string) =>
    harness.post(
      '/v1/messages',
      { model, max_tokens: 300, stream: true, messages: [{ role: 'user', content: 'Tell me about the moon, briefly please.' }] },
      harness.key,
      { 'anthropic-version': '2023-06-01' },
    );

  test("/v1/messages on an Anthropic model: message_start has the provider's input count, the receipt's", async () => {
    const response = await messages('anth/claude');
    const list = events(await response.text());
    const start = list.find((entry) => entry.event === 'message_start')!.data;
    const delta = list.find((entry) => entry.event === 'message_delta')!.data;
    const charged = await receipt(response);
    assert.ok(charged.usage.prompt_tokens > 0);
    assert.equal(start.message.usage.input_tokens, charged.usage.prompt_tokens);
    assert.equal(delta.usage.input_tokens, charged.usage.prompt_tokens);
    assert.equal(delta.usage.output_tokens, charged.usage.completion_tokens);
  });

  test("/v1/messages on an OpenAI-kind model: message_start has the gateway's count of the prompt; message_delta the exact one", async () => {
    const response = await messages('up/alpha');
    const list = events(await response.text());
    const start = list.find((entry) => entry.event === 'message_start')!.data;
    const delta = list.find((entry) => entry.event === 'message_delta')!.data;
    const charged = await receipt(response);
    assert.ok(start.message.usage.input_tokens > 0, 'never zero');
    assert.ok(Math.abs(start.message.usage.input_tokens - charged.usage.prompt_tokens) <= charged.usage.prompt_tokens, 'the same order');
    assert.equal(delta.usage.input_tokens, charged.usage.prompt_tokens);
  });

  test('/v1/responses and chat include_usage end with the exact counts the receipt charged', async () => {
    const responses = await harness.post('/v1/responses', { model: 'anth/claude', input: 'hello', stream: true });
    const completed = events(await responses.text()).find((entry) => entry.event === 'response.completed')!.data;
    const charged = await receipt(responses);
    assert.equal(completed.response.usage.input_tokens, charged.usage.prompt_tokens);
    assert.equal(completed.response.usage.output_tokens, charged.usage.completion_tokens);

    const chat = await harness.post('/v1/chat/completions', {
      model: 'anth/claude',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'hello' }],
    });
    const chunks = events(await chat.text()).filter((entry) => entry.data !== '[DONE]');
    const usage = chunks.at(-1)!.data.usage;
    const chatCharged = await receipt(chat);
    assert.deepEqual([usage.prompt_tokens, usage.completion_tokens], [chatCharged.usage.prompt_tokens, chatCharged.usage.completion_tokens]);
  });

  test('LangChain JS (@langchain/anthropic) streaming through /v1/messages reports the input tokens the receipt charged', async () => {
    const model = new ChatAnthropic({
      model: 'anth/claude',
      apiKey: harness.key,
      anthropicApiUrl: harness.gateway.url,
      maxRetries: 0,
      maxTokens: 300,
    });
    let total: AIMessageChunk | undefined;
    for await (const chunk of await model.stream('Tell me about the moon, briefly please.')) total = total ? total.concat(chunk) : chunk;
    const newest = JSON.parse(await (await harness.get('/v1/receipts?limit=1')).text()).data[0];
    assert.equal(newest.endpoint, 'messages');
    assert.ok(total?.usage_metadata, 'LangChain read usage');
    assert.equal(total!.usage_metadata!.input_tokens, newest.usage.prompt_tokens);
    assert.equal(total!.usage_metadata!.output_tokens, newest.usage.completion_tokens);
  });
});
