import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startHarness, sseData, type Harness } from './helpers/gateway-harness.ts';

let harness: Harness;
let client: OpenAI;

before(async () => {
  harness = await startHarness();
  client = new OpenAI({ baseURL: harness.baseURL, apiKey: harness.key, maxRetries: 0 });
});
after(() => harness.close());
beforeEach(() => harness.fake.reset());

describe('non-streaming with the openai SDK', () => {
  test('an alias answers with the concrete model, usage with cached tokens, and the three headers', async () => {
    harness.fake.script('alpha', { text: 'Paris is the capital.', usage: { prompt: 120, completion: 6, cached: 100 } });
    const { data, response } = await client.chat.completions
      .create({ model: 'svc/fast', messages: [{ role: 'user', content: 'Capital of France?' }], max_tokens: 50 })
      .withResponse();
    assert.equal(data.object, 'chat.completion');
    assert.equal(data.model, 'up/alpha');
    assert.equal(data.choices[0]!.message.content, 'Paris is the capital.');
    assert.equal(data.choices[0]!.message.role, 'assistant');
    assert.equal(data.choices[0]!.message.refusal, null);
    assert.equal(data.choices[0]!.finish_reason, 'stop');
    assert.deepEqual(
      {
        prompt: data.usage!.prompt_tokens,
        completion: data.usage!.completion_tokens,
        total: data.usage!.total_tokens,
        cached: data.usage!.prompt_tokens_details!.cached_tokens,
      },
      { prompt: 120, completion: 6, total: 126, cached: 100 },
    );
    const requestId = response.headers.get('x-svc-request-id')!;
    const receiptId = response.headers.get('x-svc-receipt-id')!;
    assert.match(requestId, /^req_[0-9a-z]{21}$/);
    assert.equal(receiptId, `rcpt_${requestId.slice(4)}`);
    assert.equal(response.headers.get('x-svc-model'), 'up/alpha');

    // The upstream got the upstream model name, our output cap and the provider key, not the client's.
    const sent = harness.fake.requests[0]!;
    assert.equal((sent.body as any).model, 'alpha');
    assert.equal((sent.body as any).max_tokens, 50);
    assert.equal(sent.headers.authorization, 'Bearer sk-upstream-openai-SECRET');
  });

  test('tools, tool_choice and unknown fields are forwarded; tool calls come back', async () => {
    harness.fake.script('alpha', { toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] });
    const tools = [
      { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
    ];
    const completion = await client.chat.completions.create({
      model: 'up/alpha',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools,
      tool_choice: 'auto',
      parallel_tool_calls: false,
      temperature: 0.2,
      seed: 7,
      user: 'alice',
      // @ts-expect-error a field the gateway does not know
      vendor_knob: { depth: 3 },
    });
    const call = completion.choices[0]!.message.tool_calls![0]!;
    assert.equal(completion.choices[0]!.finish_reason, 'tool_calls');
    assert.equal(call.type, 'function');
    assert.deepEqual(
      [call.id, call.type === 'function' && call.function.name, call.type === 'function' && call.function.arguments],
      ['call_1', 'get_weather', '{"city":"Paris"}'],
    );
    const sent = harness.fake.requests[0]!.body as any;
    assert.deepEqual(sent.tools, tools);
    assert.equal(sent.tool_choice, 'auto');
    assert.equal(sent.parallel_tool_calls, false);
    assert.equal(sent.temperature, 0.2);
    assert.equal(sent.seed, 7);
    assert.equal(sent.user, 'alice');
    assert.deepEqual(sent.vendor_knob, { depth: 3 });
    assert.equal(sent.routing, undefined, 'routing is for the gateway, not the provider');
  });

  test('a tool round trip: assistant tool_calls and tool results reach the provider in order', async () => {
    await client.chat.completions.create({
      model: 'up/alpha',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
      ],
    });
    const sent = harness.fake.requests[0]!.body as any;
    assert.deepEqual(
      sent.messages.map((message: any) => message.role),
      ['system', 'user', 'assistant', 'tool'],
    );
    assert.equal(sent.messages[2].tool_calls[0].function.arguments, '{"city":"Paris"}');
    assert.equal(sent.messages[3].tool_call_id, 'call_1');
  });

  test('reasoning_effort: the alias default applies, the request overrides, and it is dropped for models without reasoning', async () => {
    await client.chat.completions.create({ model: 'svc/best', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal((harness.fake.requests[0]!.body as any).reasoning_effort, 'high', 'svc/best defaults to xhigh, OpenAI calls it high');
    await client.chat.completions.create({ model: 'svc/best', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'low' });
    assert.equal((harness.fake.requests[1]!.body as any).reasoning_effort, 'low');
    await client.chat.completions.create({ model: 'svc/fast', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'medium' });
    assert.equal((harness.fake.requests[2]!.body as any).reasoning_effort, undefined, 'up/alpha has no reasoning');
  });

  test('an Anthropic model answers a chat-completions request, with cache tokens in usage', async () => {
    harness.fake.script('claude-x', {
      text: 'Bonjour',
      reasoning: 'thinking...',
      usage: { prompt: 1000, completion: 40, cached: 600, cacheWrite: 300 },
    });
    const completion = await client.chat.completions.create({
      model: 'svc/balanced',
      messages: [
        { role: 'system', content: 'You are French.' },
        { role: 'user', content: 'Hello' },
      ],
      max_completion_tokens: 20000,
    });
    assert.equal(completion.model, 'anth/claude');
    assert.equal(completion.choices[0]!.message.content, 'Bonjour');
    assert.equal(completion.usage!.prompt_tokens, 1000);
    assert.equal(completion.usage!.prompt_tokens_details!.cached_tokens, 600);
    const sent = harness.fake.requests[0]!;
    assert.equal(sent.path, '/v1/messages');
    assert.equal(sent.headers['x-api-key'], 'sk-ant-upstream-SECRET');
    assert.equal((sent.body as any).system, 'You are French.');
    assert.equal((sent.body as any).thinking.type, 'enabled', 'svc/balanced asks medium reasoning');
  });
});

test('upstream connections are kept alive and reused, streaming or not', async () => {
  for (let index = 0; index < 3; index++) {
    await client.chat.completions.create({ model: 'up/alpha', messages: [{ role: 'user', content: `n${index}` }] });
    const stream = await client.chat.completions.create({ model: 'up/alpha', messages: [{ role: 'user', content: 's' }], stream: true });
    for await (const _chunk of stream);
  }
  assert.equal(harness.fake.requests.length, 6);
  assert.ok(harness.fake.connectionCount <= 1, `${harness.fake.connectionCount} new connections for 6 requests`);
});

describe('streaming', () => {
  /** "Hi there" from up/alpha in pieces of three characters, with include_usage: the raw response. */
  function streamHiThere(): Promise<Response> {
    harness.fake.script('alpha', { text: 'Hi there', chunkSize: 3, usage: { prompt: 5, completion: 2 } });
    return harness.post('/v1/chat/completions', {
      model: 'up/alpha',
      messages: [{ role: 'user', content: 'hello' }],
      stream: true,
      stream_options: { include_usage: true },
    });
  }

  test('the openai SDK assembles a streamed answer and include_usage gives the usage chunk', async () => {
    harness.fake.script('alpha', { text: 'The quick brown fox jumps.', chunkSize: 4, usage: { prompt: 30, completion: 7, cached: 10 } });
    const stream = await client.chat.completions.create({
      model: 'svc/fast',
      messages: [{ role: 'user', content: 'Say something' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage;
    let finish;
    for await (const chunk of stream) {
      assert.equal(chunk.model, 'up/alpha');
      if (chunk.choices[0]?.delta.content) text += chunk.choices[0].delta.content;
      if (chunk.choices[0]?.finish_reason) finish = chunk.choices[0].finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, 'The quick brown fox jumps.');
    assert.equal(finish, 'stop');
    assert.equal(usage!.prompt_tokens, 30);
    assert.equal(usage!.prompt_tokens_details!.cached_tokens, 10);
  });

  test("a streamed answer whose text needs escaping reaches the openai SDK exactly, in the gateway's chunks", async () => {
    // Pieces of two characters: quotes, backslashes, newlines, tabs, non-ASCII, an emoji split
    // into its two halves, text that looks like JSON. Most are read by their text alone and go
    // out as the provider's JSON string (repeated-chunk-shape.ts, chat-chunk-encoder.ts).
    const text = 'He said "hi" \\ then\n\tleft: é ü 中文 🎉 {"a":[1,"b"]} </script> \u2028 end';
    harness.fake.script('alpha', { text, chunkSize: 2, usage: { prompt: 9, completion: 40 } });
    const stream = await client.chat.completions.create({
      model: 'up/alpha',
      messages: [{ role: 'user', content: 'Say something awkward' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let received = '';
    const ids = new Set<string>();
    let pieces = 0;
    for await (const chunk of stream) {
      ids.add(chunk.id);
      assert.equal(chunk.model, 'up/alpha');
      if (chunk.choices[0]?.delta.content) {
        received += chunk.choices[0].delta.content;
        pieces++;
      }
    }
    assert.equal(received, text);
    assert.ok(pieces >= text.length / 2 - 1, `${pieces} pieces`);
    assert.equal(ids.size, 1, "every chunk carries the gateway's one id");
    assert.match([...ids][0]!, /^chatcmpl-/);
  });

  test('raw SSE bytes follow the contract: role chunk, pieces, empty delta with finish_reason, usage, [DONE]', async () => {
    const response = await streamHiThere();
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type')!, /^text\/event-stream/);
    assert.ok(response.headers.get('x-svc-receipt-id'));
    assert.equal(response.headers.get('x-svc-model'), 'up/alpha');
    const raw = await response.text();
    assert.ok(raw.endsWith('data: [DONE]\n\n'));
    for (const block of raw.split('\n\n').filter(Boolean)) assert.match(block, /^data: /, 'each event is one data line');
    const events = sseData(raw);
    assert.equal(events.at(-1), '[DONE]');
    const chunks = events.slice(0, -1).map((data) => JSON.parse(data));
    const id = chunks[0].id;
    for (const chunk of chunks) {
      assert.equal(chunk.object, 'chat.completion.chunk');
      assert.equal(chunk.id, id);
      assert.equal(chunk.model, 'up/alpha');
    }
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '' });
    assert.equal(chunks[0].choices[0].finish_reason, null);
    const content = chunks
      .slice(1, -2)
      .map((chunk) => chunk.choices[0].delta.content)
      .join('');
    assert.equal(content, 'Hi there');
    for (const chunk of chunks.slice(1, -2)) assert.equal(chunk.choices[0].finish_reason, null);
    const last = chunks.at(-2);
    assert.deepEqual(last.choices[0].delta, {});
    assert.equal(last.choices[0].finish_reason, 'stop');
    const usage = chunks.at(-1);
    assert.deepEqual(usage.choices, []);
    assert.deepEqual([usage.usage.prompt_tokens, usage.usage.completion_tokens, usage.usage.total_tokens], [5, 2, 7]);
  });

  test('a receipt that cannot be written ends the stream with an error event, not a finish and [DONE]', async () => {
    const store = harness.gateway.deps.store;
    const recordReceipt = store.recordReceipt;
    store.recordReceipt = async () => {
      throw new Error('disk I/O error');
    };
    try {
      const response = await streamHiThere();
      assert.equal(response.status, 200);
      const events = sseData(await response.text());
      assert.ok(!events.includes('[DONE]'), 'no terminator after a failure');
      const chunks = events.map((data) => JSON.parse(data));
      const error = chunks.at(-1);
      assert.equal(error.error.code, 'internal_error');
      assert.ok(!/disk|sqlite/i.test(JSON.stringify(error)), 'nothing internal in the event');
      const content = chunks
        .slice(0, -1)
        .map((chunk) => chunk.choices[0]?.delta.content ?? '')
        .join('');
      assert.equal(content, 'Hi there', 'the answer was forwarded as it came');
      assert.ok(
        chunks.slice(0, -1).every((chunk) => chunk.choices[0].finish_reason === null && chunk.usage === undefined),
        'no finish and no usage: the answer was not settled',
      );
    } finally {
      store.recordReceipt = recordReceipt;
    }
  });

  test('without include_usage there is no usage chunk', async () => {
    const response = await harness.post('/v1/chat/completions', { model: 'up/alpha', messages: [{ role: 'user', content: 'x' }], stream: true });
    const events = sseData(await response.text());
    const chunks = events.slice(0, -1).map((data) => JSON.parse(data));
    assert.ok(chunks.every((chunk) => chunk.choices.length === 1 && chunk.usage === undefined));
    // The upstream was still asked for usage: billing needs it.
    assert.equal((harness.fake.requests[0]!.body as any).stream_options.include_usage, true);
  });

  test('tool-call arguments stream in pieces keyed by index, two calls', async () => {
    harness.fake.script('alpha', {
      chunkSize: 5,
      toolCalls: [
        { id: 'call_a', name: 'read_file', arguments: '{"path":"src/app.ts"}' },
        { id: 'call_b', name: 'list_dir', arguments: '{"path":"src"}' },
      ],
    });
    const stream = await client.chat.completions.create({
      model: 'up/alpha',
      messages: [{ role: 'user', content: 'look' }],
      tools: [
        { type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } },
        { type: 'function', function: { name: 'list_dir', parameters: { type: 'object' } } },
      ],
      stream: true,
    });
    const calls: { id?: string; name?: string; args: string; pieces: number }[] = [];
    let finish;
    for await (const chunk of stream) {
      for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
        calls[delta.index] ??= { args: '', pieces: 0 };
        const call = calls[delta.index]!;
        if (delta.id) call.id = delta.id;
        if (delta.function?.name) call.name = delta.function.name;
        if (delta.function?.arguments) {
          call.args += delta.function.arguments;
          call.pieces++;
        }
      }
      if (chunk.choices[0]?.finish_reason) finish = chunk.choices[0].finish_reason;
    }
    assert.equal(finish, 'tool_calls');
    assert.deepEqual(
      calls.map(({ id, name, args }) => ({ id, name, args })),
      [
        { id: 'call_a', name: 'read_file', args: '{"path":"src/app.ts"}' },
        { id: 'call_b', name: 'list_dir', args: '{"path":"src"}' },
      ],
    );
    assert.ok(calls[0]!.pieces > 1, 'arguments arrive in several pieces');
  });

  test('an Anthropic model streams through the OpenAI format, tool use included', async () => {
    harness.fake.script('claude-x', {
      text: 'Let me check.',
      toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }],
      usage: { prompt: 50, completion: 20, cached: 10 },
    });
    const stream = await client.chat.completions.create({
      model: 'anth/claude',
      messages: [{ role: 'user', content: 'Weather?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let args = '';
    let name;
    let usage;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        name ??= call.function?.name;
        args += call.function?.arguments ?? '';
      }
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, 'Let me check.');
    assert.equal(name, 'get_weather');
    assert.equal(args, '{"city":"Oslo"}');
    assert.equal(usage!.prompt_tokens, 50);
    assert.equal(usage!.prompt_tokens_details!.cached_tokens, 10);
  });
});
