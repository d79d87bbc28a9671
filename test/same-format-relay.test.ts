import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { startHarness, sseData, type Harness } from './helpers/gateway-harness.ts';

// A stream in the client's own format is relayed: the provider's content events reach the client
// as it sent them, with only what the contract sets changed (ids, model, the role chunk, usage,
// the terminator). These providers send what the translating path has no canonical part for.

/** OpenRouter's chunk layout: its own `provider` field, `native_finish_reason` in each choice. */
function openRouterEvents(texts: string[]): string {
  const chunk = (choice: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: 'gen-77', provider: 'OpenAI', model: 'openai/gpt-4o', object: 'chat.completion.chunk', created: 1, choices: [choice], ...extra })}\n\n`;
  return (
    chunk({ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null, native_finish_reason: null, logprobs: null }) +
    texts.map((content) => chunk({ index: 0, delta: { content }, finish_reason: null, native_finish_reason: null, logprobs: null })).join('') +
    chunk({ index: 0, delta: {}, finish_reason: 'stop', native_finish_reason: 'stop', logprobs: null }) +
    `data: ${JSON.stringify({ id: 'gen-77', provider: 'OpenAI', model: 'openai/gpt-4o', object: 'chat.completion.chunk', created: 1, choices: [], usage: { prompt_tokens: 21, completion_tokens: 5, total_tokens: 26 } })}\n\n` +
    'data: [DONE]\n\n'
  );
}

/** Anthropic's web search answer: a server tool call, its result, and text with a citation (as its docs show them). */
const WEB_SEARCH_CONTENT = [
  [
    'content_block_start',
    { type: 'content_block_start', index: 0, content_block: { type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: {} } },
  ],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"query": "gateway"}' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
  [
    'content_block_start',
    {
      type: 'content_block_start',
      index: 1,
      content_block: {
        type: 'web_search_tool_result',
        tool_use_id: 'srvtoolu_01',
        content: [{ type: 'web_search_result', title: 'Gateways', url: 'https://example.com/gw', encrypted_content: 'EqgfCioIARgB', page_age: null }],
      },
    },
  ],
  ['content_block_stop', { type: 'content_block_stop', index: 1 }],
  ['content_block_start', { type: 'content_block_start', index: 2, content_block: { type: 'text', text: '' } }],
  [
    'content_block_delta',
    {
      type: 'content_block_delta',
      index: 2,
      delta: {
        type: 'citations_delta',
        citation: {
          type: 'web_search_result_location',
          cited_text: 'A gateway relays.',
          url: 'https://example.com/gw',
          title: 'Gateways',
          encrypted_index: 'Eo8BCioIAhgB',
        },
      },
    },
  ],
  ['content_block_delta', { type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'A gateway relays.' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 2 }],
] as const;

function anthropicEvents(): string {
  const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  return (
    event('message_start', {
      type: 'message_start',
      message: {
        id: 'msg_upstream',
        type: 'message',
        role: 'assistant',
        model: 'claude-x',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 410, output_tokens: 1 },
      },
    }) +
    event('ping', { type: 'ping' }) +
    WEB_SEARCH_CONTENT.map(([name, data]) => event(name, data)).join('') +
    event('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 39, server_tool_use: { web_search_requests: 1 } },
    }) +
    event('message_stop', { type: 'message_stop' })
  );
}

let upstream: Server;
let harness: Harness;

before(async () => {
  upstream = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(request.url === '/v1/messages' ? anthropicEvents() : openRouterEvents(['Hel', 'lo', ' "there"']));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  harness = await startHarness({
    editConfig: (text) =>
      text
        .replace(
          'models:\n',
          `  - { id: router, kind: openai, base_url: "${url}/v1", api_key: sk-router }\n  - { id: search, kind: anthropic, base_url: "${url}", api_key: sk-search }\nmodels:\n`,
        )
        .replace(
          'aliases:\n',
          `  - { id: router/gpt-4o, provider: router, upstream: openai/gpt-4o, price: { input: "2.50", output: "10.00" }, context_window: 128000, max_output_tokens: 4096 }
  - { id: search/claude, provider: search, upstream: claude-x, price: { input: "3.00", output: "15.00" }, context_window: 200000, max_output_tokens: 4096 }
aliases:\n`,
        ),
  });
});

after(async () => {
  await harness?.close();
  await new Promise((resolve) => upstream?.close(resolve));
});

async function receiptOf(response: Response): Promise<any> {
  const receipt = await harness.get(`/v1/receipts/${response.headers.get('x-svc-receipt-id')}`);
  assert.equal(receipt.status, 200);
  return receipt.json();
}

describe('a chat-completions stream from an OpenAI-kind provider', () => {
  test("relays the provider's choices byte for byte under the gateway's id and model", async () => {
    const response = await harness.post('/v1/chat/completions', {
      model: 'router/gpt-4o',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    assert.equal(response.status, 200);
    const text = await response.text();
    const events = sseData(text);
    assert.equal(events.at(-1), '[DONE]');
    const chunks = events.slice(0, -1).map((data) => JSON.parse(data));
    const id = `chatcmpl-${response.headers.get('x-svc-request-id')!.slice(4)}`;
    for (const chunk of chunks) {
      assert.equal(chunk.id, id);
      assert.equal(chunk.model, 'router/gpt-4o');
      assert.equal('provider' in chunk, false, "the provider's own top-level fields stay behind");
    }
    assert.equal(chunks.filter((chunk) => chunk.choices[0]?.delta.role === 'assistant').length, 1, 'one role chunk, the first');
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '' });
    const pieces = chunks.slice(1, 4);
    assert.deepEqual(
      pieces.map((chunk) => chunk.choices[0]),
      ['Hel', 'lo', ' "there"'].map((content) => ({ index: 0, delta: { content }, finish_reason: null, native_finish_reason: null, logprobs: null })),
      'each piece is the provider choice, its own native_finish_reason included',
    );
    assert.ok(
      text.includes('"choices":[{"index":0,"delta":{"content":" \\"there\\""},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]'),
      'as the provider wrote it',
    );
    assert.equal(chunks[4].choices[0].finish_reason, 'stop');
    assert.deepEqual(chunks[5].choices, []);
    assert.deepEqual([chunks[5].usage.prompt_tokens, chunks[5].usage.completion_tokens, chunks[5].usage.total_tokens], [21, 5, 26]);

    const receipt = await receiptOf(response);
    assert.equal(receipt.status, 'succeeded');
    assert.equal(receipt.usage_estimated, false);
    assert.equal(receipt.cost, '0.000102500', 'the reported usage, priced exactly: 21 x $2.50/M + 5 x $10/M');
  });
});

describe('a Messages stream from an Anthropic-kind provider', () => {
  test('relays server tool blocks and citations as the provider sent them', async () => {
    const response = await harness.post(
      '/v1/messages',
      { model: 'search/claude', max_tokens: 1024, stream: true, messages: [{ role: 'user', content: 'What is a gateway?' }] },
      harness.key,
      {
        'anthropic-version': '2023-06-01',
      },
    );
    assert.equal(response.status, 200);
    const text = await response.text();
    for (const [name, data] of WEB_SEARCH_CONTENT) assert.ok(text.includes(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`), `${name} as sent`);
    const blocks = text.split('\n\n').filter(Boolean);
    const names = blocks.map((block) => block.split('\n')[0]!.slice('event: '.length));
    assert.deepEqual(names, ['message_start', ...WEB_SEARCH_CONTENT.map(([name]) => name), 'message_delta', 'message_stop']);
    const data = (index: number) => JSON.parse(blocks[index]!.split('\n')[1]!.slice('data: '.length));
    const start = data(0);
    assert.equal(start.message.id, `msg_${response.headers.get('x-svc-request-id')!.slice(4)}`);
    assert.equal(start.message.model, 'search/claude');
    assert.equal(start.message.usage.input_tokens, 410);
    const delta = data(blocks.length - 2);
    assert.equal(delta.delta.stop_reason, 'end_turn');
    assert.equal(delta.usage.output_tokens, 39);

    const receipt = await receiptOf(response);
    assert.equal(receipt.status, 'succeeded');
    assert.equal(receipt.cost, '0.001815000', '410 x $3/M + 39 x $15/M');
  });

  test('the Anthropic SDK assembles the relayed blocks into its message', async () => {
    const client = new Anthropic({ apiKey: harness.key, baseURL: harness.gateway.url });
    const message = await client.messages
      .stream({ model: 'search/claude', max_tokens: 1024, messages: [{ role: 'user', content: 'What is a gateway?' }] })
      .finalMessage();
    assert.deepEqual(
      message.content.map((block) => block.type),
      ['server_tool_use', 'web_search_tool_result', 'text'],
    );
    const textBlock = message.content[2] as Anthropic.TextBlock;
    assert.equal(textBlock.text, 'A gateway relays.');
    assert.equal(textBlock.citations?.[0]?.cited_text, 'A gateway relays.');
    assert.equal(message.usage.output_tokens, 39);
  });
});
