import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';

/** A Claude Code request as observed against a logging server (see issue 4), model and all. */
const claudeCode = JSON.parse(readFileSync(new URL('./fixtures/claude-code-messages-request.json', import.meta.url), 'utf8'));
const CLAUDE_CODE_BETAS = 'claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,fine-grained-tool-streaming-2025-05-14';
const SIGNATURE = 'EqQBCkgIAxABGAIiQHn0sNs+signed+by+the+fake';

let harness: Harness;

before(async () => {
  harness = await startHarness();
});
after(() => harness.close());
beforeEach(() => harness.fake.reset());

/** POST /v1/messages as Claude Code does: x-api-key, anthropic-version and its betas, `?beta=true`. */
function postMessages(body: unknown, headers: Record<string, string> = {}, path = '/v1/messages?beta=true') {
  return fetch(`${harness.gateway.url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': harness.key,
      'anthropic-version': '2023-06-01',
      'anthropic-beta': CLAUDE_CODE_BETAS,
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

/** An Anthropic event stream as [event name, data] pairs, checking the framing of every event. */
function anthropicEvents(text: string): Array<[string, any]> {
  assert.ok(text.endsWith('\n\n'), 'the stream ends after a whole event');
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((block) => {
      const match = /^event: ([a-z_]+)\ndata: (\{.*\})$/.exec(block);
      assert.ok(match, `not an Anthropic event: ${JSON.stringify(block)}`);
      const data = JSON.parse(match[2]!);
      assert.equal(data.type, match[1]);
      return [match[1]!, data] as [string, any];
    });
}

/** `event[:index][:block or delta type]` per event: the shape Claude Code's stream reader depends on. */
function shape(events: Array<[string, any]>): string[] {
  return events.map(([name, data]) =>
    [name, data.index, data.content_block?.type ?? data.delta?.type].filter((part) => part !== undefined).join(':'),
  );
}

async function receiptOf(response: Response) {
  const receipt = await harness.get(`/v1/receipts/${response.headers.get('x-svc-receipt-id')}`);
  assert.equal(receipt.status, 200);
  return receipt.json() as Promise<any>;
}

function upstreamBody(): any {
  assert.equal(harness.fake.requests.length, 1, 'one upstream call');
  return harness.fake.requests[0]!.body;
}

describe('a recorded Claude Code request', () => {
  test('reaches the Anthropic model with cache_control, signed thinking and unknown fields exactly', async () => {
    const editArguments = '{"file_path":"/repo/src/sum.ts","old_string":"a - b","new_string":"a + b"}';
    harness.fake.script('claude-x', {
      reasoning: 'The bug is the minus sign.',
      signature: SIGNATURE,
      text: 'Fixing it.',
      toolCalls: [{ id: 'toolu_02Edit', name: 'Edit', arguments: editArguments }],
      usage: { prompt: 9_000, cached: 8_000, cacheWrite: 600, completion: 80 },
      chunkSize: 6,
    });
    const response = await postMessages(claudeCode);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type')!, /^text\/event-stream/);
    assert.equal(response.headers.get('x-svc-model'), 'anth/claude');
    const text = await response.text();

    const sent = upstreamBody();
    assert.deepEqual(
      sent.system,
      [...claudeCode.system, { type: 'text', text: claudeCode.messages[0].content }],
      'the role: system message joins the system blocks',
    );
    assert.deepEqual(sent.messages, claudeCode.messages.slice(1), 'blocks, cache_control, thinking signatures and tool results as sent');
    assert.deepEqual(sent.tools, claudeCode.tools, 'tools with their 2020-12 schemas, defer_loading and cache_control');
    assert.deepEqual(sent.metadata, claudeCode.metadata);
    assert.deepEqual(sent.context_management, claudeCode.context_management);
    assert.deepEqual(sent.tool_choice, { type: 'auto' });
    assert.deepEqual(sent.thinking, { type: 'enabled', budget_tokens: 24_576 }, 'effort high is the xhigh budget, kept in a signed tool loop');
    assert.equal(sent.max_tokens, 32_000);
    assert.equal(sent.model, 'claude-x');
    assert.equal(sent.stream, true);
    assert.equal('output_config' in sent, false, 'the effort became the thinking budget');
    assert.equal(harness.fake.requests[0]!.headers['anthropic-beta'], CLAUDE_CODE_BETAS, "the client's betas go along");
    assert.equal(harness.fake.requests[0]!.headers['x-api-key'], 'sk-ant-upstream-SECRET');

    const events = anthropicEvents(text);
    assert.deepEqual(shape(events), [
      'message_start',
      'content_block_start:0:thinking',
      'content_block_delta:0:thinking_delta',
      'content_block_delta:0:thinking_delta',
      'content_block_delta:0:thinking_delta',
      'content_block_delta:0:thinking_delta',
      'content_block_delta:0:thinking_delta',
      'content_block_delta:0:signature_delta',
      'content_block_stop:0',
      'content_block_start:1:text',
      'content_block_delta:1:text_delta',
      'content_block_delta:1:text_delta',
      'content_block_stop:1',
      'content_block_start:2:tool_use',
      // Relayed as the provider sent them: Anthropic opens a tool's input with an empty fragment.
      ...Array(1 + Math.ceil(editArguments.length / 6)).fill('content_block_delta:2:input_json_delta'),
      'content_block_stop:2',
      'message_delta',
      'message_stop',
    ]);
    const requestId = response.headers.get('x-svc-request-id')!;
    assert.equal(events[0]![1].message.id, `msg_${requestId.slice(4)}`);
    assert.equal(events[0]![1].message.model, 'anth/claude');
    assert.equal(events.find(([, data]) => data.delta?.type === 'signature_delta')![1].delta.signature, SIGNATURE);
    assert.deepEqual(events[13]![1].content_block, { type: 'tool_use', id: 'toolu_02Edit', name: 'Edit', input: {} });
    const argumentsText = events
      .filter(([, data]) => data.delta?.type === 'input_json_delta')
      .map(([, data]) => data.delta.partial_json)
      .join('');
    assert.deepEqual(JSON.parse(argumentsText), { file_path: '/repo/src/sum.ts', old_string: 'a - b', new_string: 'a + b' });
    assert.deepEqual(events.at(-2)![1], {
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { input_tokens: 400, cache_creation_input_tokens: 600, cache_read_input_tokens: 8_000, output_tokens: 80 },
    });

    const receipt = await receiptOf(response);
    assert.equal(receipt.endpoint, 'messages');
    assert.equal(receipt.status, 'succeeded');
    assert.equal(receipt.model, 'anth/claude');
    assert.equal(receipt.usage.cached_tokens, 8_000);
  });

  test("thinking enabled with a budget: an Anthropic model gets the client's own budget", async () => {
    await (await postMessages({ ...claudeCode, thinking: { type: 'enabled', budget_tokens: 4_000 }, output_config: undefined })).text();
    assert.deepEqual(upstreamBody().thinking, { type: 'enabled', budget_tokens: 4_000 });
  });

  test('reaches an OpenAI-compatible model as a clean chat-completions request, and answers in Anthropic events', async () => {
    harness.fake.script('alpha', {
      reasoning: 'minus sign',
      text: 'Fixing it.',
      toolCalls: [{ id: 'call_edit1', name: 'Edit', arguments: '{"file_path":"/repo/src/sum.ts"}' }],
      usage: { prompt: 5_000, cached: 1_000, completion: 40 },
    });
    const response = await postMessages({ ...claudeCode, routing: { allowed_models: ['up/alpha'] } });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-svc-model'), 'up/alpha');
    const text = await response.text();

    const sent = upstreamBody();
    assert.equal(harness.fake.requests[0]!.path, '/v1/chat/completions');
    // metadata.user_id is the end-user id OpenAI calls `user`; the rest of Claude Code's Anthropic fields have no equivalent.
    assert.deepEqual(Object.keys(sent).sort(), ['max_tokens', 'messages', 'model', 'stream', 'stream_options', 'tool_choice', 'tools', 'user']);
    assert.equal(sent.user, claudeCode.metadata.user_id);
    assert.equal(sent.max_tokens, 4_096, "max_tokens lowered to the model's maximum instead of a 400");
    assert.equal(sent.tool_choice, 'auto');
    assert.equal(sent.tools.length, claudeCode.tools.length);
    for (const [index, tool] of sent.tools.entries()) {
      const original = claudeCode.tools[index];
      assert.deepEqual(tool, {
        type: 'function',
        function: { name: original.name, description: original.description, parameters: original.input_schema },
      });
    }
    assert.deepEqual(sent.messages, [
      ...claudeCode.system.map((block: any) => ({ role: 'system', content: block.text })),
      { role: 'system', content: claudeCode.messages[0].content },
      { role: 'user', content: claudeCode.messages[1].content.map((block: any) => ({ type: 'text', text: block.text })) },
      {
        role: 'assistant',
        content: "I'll read the source file first.",
        tool_calls: [
          { id: 'toolu_01A9ckz4fnpTdNZJcQ7G8qxW', type: 'function', function: { name: 'Read', arguments: '{"file_path":"/repo/src/sum.ts"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_01A9ckz4fnpTdNZJcQ7G8qxW', content: claudeCode.messages[3].content[0].content[0].text },
    ]);
    assert.ok(!JSON.stringify(sent).includes('cache_control'), 'no cache_control anywhere');
    assert.ok(!JSON.stringify(sent).includes('signature'), 'no thinking signatures');

    const events = anthropicEvents(text);
    assert.deepEqual(shape(events), [
      'message_start',
      'content_block_start:0:thinking',
      'content_block_delta:0:thinking_delta',
      'content_block_delta:0:thinking_delta',
      'content_block_stop:0',
      'content_block_start:1:text',
      'content_block_delta:1:text_delta',
      'content_block_delta:1:text_delta',
      'content_block_stop:1',
      'content_block_start:2:tool_use',
      'content_block_delta:2:input_json_delta',
      'content_block_delta:2:input_json_delta',
      'content_block_delta:2:input_json_delta',
      'content_block_delta:2:input_json_delta',
      'content_block_stop:2',
      'message_delta',
      'message_stop',
    ]);
    assert.deepEqual(events[9]![1].content_block, { type: 'tool_use', id: 'call_edit1', name: 'Edit', input: {} });
    assert.deepEqual(events.at(-2)![1].usage, {
      input_tokens: 4_000,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 1_000,
      output_tokens: 40,
    });
  });

  test('non-streaming, from either kind of model: one message with thinking, text and tool use', async () => {
    harness.fake.script('claude-x', {
      reasoning: 'r',
      signature: SIGNATURE,
      text: 't',
      toolCalls: [{ id: 'toolu_9', name: 'Read', arguments: '{"file_path":"a"}' }],
    });
    let response = await postMessages({ ...claudeCode, stream: false });
    let message = await response.json();
    assert.equal(response.headers.get('x-svc-model'), 'anth/claude');
    assert.deepEqual(message.content, [
      { type: 'thinking', thinking: 'r', signature: SIGNATURE },
      { type: 'text', text: 't' },
      { type: 'tool_use', id: 'toolu_9', name: 'Read', input: { file_path: 'a' } },
    ]);
    assert.equal(message.stop_reason, 'tool_use');
    assert.equal(message.id, `msg_${response.headers.get('x-svc-request-id')!.slice(4)}`);

    harness.fake.reset();
    harness.fake.script('alpha', { text: 'plain answer' });
    response = await postMessages({ ...claudeCode, stream: false, model: 'up/alpha' });
    message = await response.json();
    assert.deepEqual(message.content, [{ type: 'text', text: 'plain answer' }]);
    assert.deepEqual([message.model, message.stop_reason, message.type, message.role], ['up/alpha', 'end_turn', 'message', 'assistant']);
    assert.equal(typeof message.usage.input_tokens, 'number');
  });
});

describe('a tool round trip', () => {
  const tools = [
    {
      name: 'get_weather',
      description: 'Weather by city',
      input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  ];
  const ask = { role: 'user', content: 'Weather in Paris?' };

  test('with an Anthropic model: tool_use, then the tool_result and the signed thinking go back', async () => {
    harness.fake.script('claude-x', {
      reasoning: 'Need weather.',
      signature: SIGNATURE,
      toolCalls: [{ id: 'toolu_w1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
    });
    const first = await (
      await postMessages({ model: 'anth/claude', max_tokens: 4_000, tools, messages: [ask], thinking: { type: 'enabled', budget_tokens: 2_000 } })
    ).json();
    assert.equal(first.stop_reason, 'tool_use');

    harness.fake.reset();
    harness.fake.script('claude-x', { text: 'Sunny, 21C.' });
    const toolResult = {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_w1', content: 'sunny, 21C', cache_control: { type: 'ephemeral' } }],
    };
    const second = await (
      await postMessages({
        model: 'anth/claude',
        max_tokens: 4_000,
        tools,
        thinking: { type: 'enabled', budget_tokens: 2_000 },
        messages: [ask, { role: 'assistant', content: first.content }, toolResult],
      })
    ).json();
    assert.deepEqual(second.content, [{ type: 'text', text: 'Sunny, 21C.' }]);
    const sent = upstreamBody();
    assert.deepEqual(sent.messages, [
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Need weather.', signature: SIGNATURE },
          { type: 'tool_use', id: 'toolu_w1', name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      toolResult,
    ]);
    assert.deepEqual(sent.thinking, { type: 'enabled', budget_tokens: 2_000 });
  });

  test('with an OpenAI-compatible model, streaming: tool_calls and a tool message', async () => {
    harness.fake.script('alpha', { toolCalls: [{ id: 'call_w1', name: 'get_weather', arguments: '{"city":"Paris"}' }] });
    const events = anthropicEvents(await (await postMessages({ model: 'up/alpha', max_tokens: 1_000, tools, messages: [ask], stream: true })).text());
    assert.deepEqual(
      shape(events).filter((entry) => !entry.includes('input_json_delta')),
      ['message_start', 'content_block_start:0:tool_use', 'content_block_stop:0', 'message_delta', 'message_stop'],
    );
    assert.equal(events.at(-2)![1].delta.stop_reason, 'tool_use');
    const input = JSON.parse(
      events
        .filter(([, data]) => data.delta?.type === 'input_json_delta')
        .map(([, data]) => data.delta.partial_json)
        .join(''),
    );
    const toolUse = { ...events[1]![1].content_block, input };

    harness.fake.reset();
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } };
    await (
      await postMessages({
        model: 'up/alpha',
        max_tokens: 1_000,
        tools,
        messages: [
          ask,
          { role: 'assistant', content: [toolUse] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_w1', content: [{ type: 'text', text: 'sunny' }, image] }] },
        ],
      })
    ).json();
    assert.deepEqual(upstreamBody().messages, [
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_w1', content: 'sunny' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Images returned by the tool calls above:' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      },
    ]);
  });

  test('across providers: a turn answered by an OpenAI model continues on the Anthropic one', async () => {
    harness.fake.script('alpha', {
      reasoning: 'unsigned thoughts',
      toolCalls: [{ id: 'call_x1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
    });
    const first = await (await postMessages({ model: 'up/alpha', max_tokens: 4_000, tools, messages: [ask] })).json();
    assert.deepEqual(first.content[0], { type: 'thinking', thinking: 'unsigned thoughts', signature: '' });

    harness.fake.reset();
    const toolResult = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_x1', content: 'sunny' }] };
    const response = await postMessages({
      model: 'anth/claude',
      max_tokens: 4_000,
      tools,
      thinking: { type: 'adaptive' },
      messages: [ask, { role: 'assistant', content: first.content }, toolResult],
    });
    assert.equal(response.status, 200);
    const sent = upstreamBody();
    assert.deepEqual(
      sent.messages[1].content,
      [{ type: 'tool_use', id: 'call_x1', name: 'get_weather', input: { city: 'Paris' } }],
      'unsigned thinking stays behind',
    );
    assert.equal('thinking' in sent, false, 'without a signed thinking block, the tool loop goes on without thinking');
  });
});

describe('the official @anthropic-ai/sdk', () => {
  const client = () => new Anthropic({ baseURL: harness.gateway.url, apiKey: harness.key, maxRetries: 0 });
  const params = { model: 'svc/balanced', max_tokens: 2_000, messages: [{ role: 'user' as const, content: 'Hello' }] };

  test('messages.create, not streaming', async () => {
    harness.fake.script('claude-x', { text: 'Hi there.', usage: { prompt: 20, cached: 5, completion: 3 } });
    const { data: message, response } = await client().messages.create(params).withResponse();
    assert.equal(message.type, 'message');
    assert.equal(message.model, 'anth/claude');
    assert.deepEqual(message.content, [{ type: 'text', text: 'Hi there.' }]);
    assert.equal(message.stop_reason, 'end_turn');
    assert.deepEqual(message.usage, { input_tokens: 15, cache_creation_input_tokens: 0, cache_read_input_tokens: 5, output_tokens: 3 });
    assert.equal(harness.fake.requests[0]!.body && (harness.fake.requests[0]!.body as any).model, 'claude-x');
    assert.ok(response.headers.get('x-svc-receipt-id'));
  });

  test('messages.create with stream: true, sent as Bearer with anthropic-version 2026-10-21', async () => {
    harness.fake.script('claude-x', { text: 'Streamed answer.', chunkSize: 4 });
    let sentHeaders = new Headers();
    const watched = new Anthropic({
      baseURL: harness.gateway.url,
      apiKey: harness.key,
      maxRetries: 0,
      fetch: (url, init) => {
        sentHeaders = new Headers(init?.headers);
        return fetch(url, init);
      },
    });
    const stream = await watched.messages.create({ ...params, stream: true });
    assert.equal(sentHeaders.get('anthropic-version'), '2026-10-21');
    assert.equal(sentHeaders.get('authorization'), `Bearer ${harness.key}`);
    assert.equal(sentHeaders.get('x-api-key'), null);
    const types: string[] = [];
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
    }
    assert.equal(text, 'Streamed answer.');
    assert.deepEqual([types[0], types.at(-2), types.at(-1)], ['message_start', 'message_delta', 'message_stop']);
  });

  test('messages.stream(...).finalMessage() assembles thinking with its signature and tool input, from an auth token', async () => {
    harness.fake.script('claude-x', {
      reasoning: 'Think.',
      signature: SIGNATURE,
      text: 'Calling.',
      toolCalls: [{ id: 'toolu_s1', name: 'get_weather', arguments: '{"city":"Rome"}' }],
      chunkSize: 3,
    });
    const withToken = new Anthropic({
      baseURL: harness.gateway.url,
      authToken: harness.key,
      maxRetries: 0,
      defaultHeaders: { 'anthropic-version': '2023-06-01' },
    });
    const stream = withToken.messages.stream({
      ...params,
      thinking: { type: 'enabled', budget_tokens: 1_024 },
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
    });
    const message = await stream.finalMessage();
    assert.deepEqual(message.content, [
      { type: 'thinking', thinking: 'Think.', signature: SIGNATURE },
      { type: 'text', text: 'Calling.' },
      { type: 'tool_use', id: 'toolu_s1', name: 'get_weather', input: { city: 'Rome' } },
    ]);
    assert.equal(message.stop_reason, 'tool_use');
    assert.ok(message.usage.output_tokens > 0);
    assert.equal(harness.fake.requests[0]!.headers['x-api-key'], 'sk-ant-upstream-SECRET');
  });

  test('messages.countTokens and models.list', async () => {
    const count = await client().messages.countTokens({ model: 'svc/balanced', messages: params.messages, system: 'Be brief.' });
    assert.ok(count.input_tokens > 0 && count.input_tokens < 100, String(count.input_tokens));
    assert.equal(harness.fake.requests.length, 0, 'counting calls no provider');

    const page = await client().models.list({ limit: 2 });
    assert.deepEqual(
      page.data.map((model) => model.id),
      ['svc/fast', 'svc/balanced'],
    );
    assert.equal(page.data[0]!.type, 'model');
    assert.match(page.data[0]!.display_name, /svc\/fast/);
    assert.ok(!Number.isNaN(Date.parse(page.data[0]!.created_at)));
    assert.equal(page.has_more, true);
    const all: string[] = [];
    for await (const model of client().models.list({ limit: 3 })) all.push(model.id);
    assert.deepEqual(all, ['svc/fast', 'svc/balanced', 'svc/best', 'up/alpha', 'up/beta', 'anth/claude', 'up/tiny']);
  });

  test('a provider failing mid-stream raises an overloaded error from the stream', async () => {
    harness.fake.script('claude-x', { text: 'abcdefgh', chunkSize: 2, errorAfterChunks: 2 });
    const stream = client().messages.stream(params);
    await assert.rejects(stream.finalMessage(), (error: any) => {
      assert.ok(error instanceof Anthropic.APIError, String(error));
      assert.equal(error.type, 'overloaded_error');
      assert.equal(error.error.error.code, 'provider_unavailable');
      assert.equal(error.error.error.retryable, true);
      return true;
    });
  });
});

describe('count_tokens and models without the SDK', () => {
  test('count_tokens answers for the first candidate, without a receipt', async () => {
    const response = await postMessages(
      { model: 'svc/balanced', messages: claudeCode.messages, system: claudeCode.system, tools: claudeCode.tools },
      {},
      '/v1/messages/count_tokens?beta=true',
    );
    assert.equal(response.status, 200);
    const body = await response.json();
    assert.deepEqual(Object.keys(body), ['input_tokens']);
    assert.ok(body.input_tokens > 1_000, String(body.input_tokens));
    assert.equal(response.headers.get('x-svc-receipt-id'), null);
  });

  test('GET /v1/models is Anthropic-shaped only with anthropic-version; after_id pages', async () => {
    const get = (query: string, headers: Record<string, string> = {}) =>
      fetch(`${harness.gateway.url}/v1/models${query}`, { headers: { 'x-api-key': harness.key, ...headers } });
    const openai = await (await get('')).json();
    assert.equal(openai.object, 'list');
    const page = await (await get('?limit=1000', { 'anthropic-version': '2023-06-01' })).json();
    assert.deepEqual(Object.keys(page).sort(), ['data', 'first_id', 'has_more', 'last_id']);
    assert.equal(page.data.length, 7);
    assert.deepEqual([page.first_id, page.last_id, page.has_more], ['svc/fast', 'up/tiny', false]);
    const next = await (await get('?limit=2&after_id=svc/best', { 'anthropic-version': '2023-06-01' })).json();
    assert.deepEqual(
      next.data.map((model: any) => model.id),
      ['up/alpha', 'up/beta'],
    );
    const bad = await get('?limit=0', { 'anthropic-version': '2023-06-01' });
    assert.equal(bad.status, 400);
    assert.equal((await bad.json()).error.type, 'invalid_request_error');
  });
});

describe('errors in the Anthropic shape', () => {
  async function expectAnthropicError(response: Response, status: number, code: string, type: string, retryable: boolean) {
    assert.equal(response.status, status);
    const body = await response.json();
    assert.equal(body.type, 'error');
    assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'request_id', 'retryable', 'type']);
    assert.equal(body.error.type, type);
    assert.equal(body.error.code, code);
    assert.equal(body.error.retryable, retryable);
    assert.equal(body.error.request_id, response.headers.get('x-svc-request-id'));
    assert.equal(response.headers.get('x-should-retry'), String(retryable), 'Anthropic SDKs retry exactly what is retryable');
    return body.error;
  }

  test('401 from auth, 400 naming the field, 404 for an unknown path, 403 for a model the key may not use', async () => {
    await expectAnthropicError(await postMessages(claudeCode, { 'x-api-key': 'svc_nope' }), 401, 'invalid_api_key', 'authentication_error', false);
    const error = await expectAnthropicError(
      await postMessages({ ...claudeCode, max_tokens: 'lots' }),
      400,
      'invalid_request',
      'invalid_request_error',
      false,
    );
    assert.match(error.message, /max_tokens/);
    await expectAnthropicError(await postMessages(claudeCode, {}, '/v1/messages/batches'), 404, 'not_found', 'not_found_error', false);
    const { key } = await harness.createKey({ models: ['svc/fast'] });
    await expectAnthropicError(await postMessages(claudeCode, { 'x-api-key': key }), 403, 'model_not_allowed', 'permission_error', false);
    assert.equal(harness.fake.requests.length, 0);
  });

  test('503 when every candidate failed, with a receipt for the messages endpoint', async () => {
    harness.fake.script('claude-x', { status: 529 });
    harness.fake.script('alpha', { status: 500 });
    const response = await postMessages({ ...claudeCode, stream: true });
    const error = await expectAnthropicError(response, 503, 'provider_unavailable', 'overloaded_error', true);
    assert.match(error.message, /anth\/claude.*up\/alpha/);
    const receipt = await receiptOf(response);
    assert.deepEqual([receipt.endpoint, receipt.status, receipt.error_code], ['messages', 'failed', 'provider_unavailable']);
  });

  test('the SDK raises the matching error classes', async () => {
    const sdk = (apiKey: string) => new Anthropic({ baseURL: harness.gateway.url, apiKey, maxRetries: 0 });
    const params = { model: 'svc/balanced', max_tokens: 100, messages: [{ role: 'user' as const, content: 'x' }] };
    await assert.rejects(sdk('svc_nope').messages.create(params), Anthropic.AuthenticationError);
    const { key } = await harness.createKey({ models: ['svc/fast'] });
    await assert.rejects(sdk(key).messages.create(params), (error: any) => {
      assert.ok(error instanceof Anthropic.PermissionDeniedError);
      assert.equal(error.type, 'permission_error');
      assert.equal((error.error as any).error.code, 'model_not_allowed');
      return true;
    });
    await assert.rejects(sdk(harness.key).messages.create({ ...params, model: 'gpt-9' }), Anthropic.BadRequestError);
    harness.fake.script('claude-x', { status: 500 });
    harness.fake.script('alpha', { status: 503 });
    await assert.rejects(sdk(harness.key).messages.create(params), Anthropic.ServiceUnavailableError);
  });

  test('429 with retry-after once the key is over its rate limit; the SDK raises RateLimitError', async () => {
    const { key } = await harness.createKey({ name: 'limited' });
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(harness.gateway.deps.config.database.path);
    db.prepare('UPDATE api_keys SET rate_limit_per_minute = 1 WHERE prefix = ?').run(key.slice(0, 12));
    db.close();
    assert.equal((await postMessages({ ...params(), stream: false }, { 'x-api-key': key })).status, 200);
    const limited = await postMessages({ ...params(), stream: false }, { 'x-api-key': key });
    await expectAnthropicError(limited, 429, 'rate_limit_exceeded', 'rate_limit_error', true);
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    await assert.rejects(new Anthropic({ baseURL: harness.gateway.url, apiKey: key, maxRetries: 0 }).messages.create(params()), (error: any) => {
      assert.ok(error instanceof Anthropic.RateLimitError);
      assert.ok(Number(error.headers.get('retry-after')) >= 1);
      return true;
    });

    function params() {
      return { model: 'svc/balanced', max_tokens: 100, messages: [{ role: 'user' as const, content: 'x' }] };
    }
  });
});

describe('402 in the Anthropic shape', () => {
  let broke: Harness;
  before(async () => {
    broke = await startHarness({ fundsNano: 0 });
  });
  after(() => broke.close());

  test('insufficient_balance is a billing_error; the SDK raises PaymentRequiredError', async () => {
    const client = new Anthropic({ baseURL: broke.gateway.url, apiKey: broke.key, maxRetries: 0 });
    await assert.rejects(
      client.messages.create({ model: 'svc/balanced', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] }),
      (error: any) => {
        assert.ok(error instanceof Anthropic.PaymentRequiredError, String(error));
        assert.equal(error.status, 402);
        assert.equal(error.type, 'billing_error');
        assert.equal((error.error as any).error.code, 'insufficient_balance');
        assert.equal(error.headers.get('x-should-retry'), 'false');
        return true;
      },
    );
    assert.equal(broke.fake.requests.length, 0);
  });
});
