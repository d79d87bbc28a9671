import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSse, type SseEvent } from '../../src/formats/sse/parse-sse.ts';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream.ts';

let fake: FakeUpstream;
before(async () => {
  fake = await startFakeUpstream();
});
after(async () => {
  await fake.close();
});
beforeEach(() => fake.reset());

function post(path: string, body: unknown, init: { signal?: AbortSignal; headers?: Record<string, string> } = {}): Promise<Response> {
  return fetch(`${fake.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...init.headers },
    body: JSON.stringify(body),
    signal: init.signal,
  });
}

async function events(response: Response): Promise<SseEvent[]> {
  const collected: SseEvent[] = [];
  for await (const event of parseSse(response.body as unknown as AsyncIterable<Uint8Array>)) collected.push(event);
  return collected;
}

const chat = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'hi' }], ...extra });
const messages = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  max_tokens: 4096,
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
});

describe('OpenAI format', () => {
  test('answers with the default reply and records the request', async () => {
    const response = await post('/v1/chat/completions', chat('gpt-x'), { headers: { authorization: 'Bearer sk-test' } });
    assert.equal(response.status, 200);
    const body = (await response.json()) as any;
    assert.equal(body.object, 'chat.completion');
    assert.equal(body.model, 'gpt-x');
    assert.deepEqual(body.choices[0].message, { role: 'assistant', content: 'Hello from gpt-x', refusal: null, annotations: [] });
    assert.equal(body.choices[0].finish_reason, 'stop');
    assert.equal(body.usage.total_tokens, body.usage.prompt_tokens + body.usage.completion_tokens);
    assert.equal(fake.requests.length, 1);
    assert.equal(fake.requests[0]!.path, '/v1/chat/completions');
    assert.equal(fake.requests[0]!.headers.authorization, 'Bearer sk-test');
    assert.deepEqual(fake.requests[0]!.body, chat('gpt-x'));
  });

  test('uses scripted replies in order per model, then the default', async () => {
    fake.script('gpt-x', { text: 'one' }, { text: 'two' });
    const texts: string[] = [];
    for (const model of ['gpt-x', 'gpt-y', 'gpt-x', 'gpt-x']) {
      const body = (await (await post('/v1/chat/completions', chat(model))).json()) as any;
      texts.push(body.choices[0].message.content);
    }
    assert.deepEqual(texts, ['one', 'Hello from gpt-y', 'two', 'Hello from gpt-x']);
  });

  test('streams chunks like OpenAI: role, reasoning, content, tool calls, finish, usage, [DONE]', async () => {
    fake.script('gpt-x', {
      reasoning: 'think',
      text: 'Hello world',
      toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      usage: { prompt: 50, completion: 20, cached: 10, reasoning: 5 },
      chunkSize: 6,
    });
    const response = await post('/v1/chat/completions', chat('gpt-x', { stream: true, stream_options: { include_usage: true } }));
    assert.match(response.headers.get('content-type')!, /^text\/event-stream/);
    const all = await events(response);
    assert.equal(all.at(-1)!.data, '[DONE]');
    const chunks = all.slice(0, -1).map((event) => JSON.parse(event.data));
    assert.ok(chunks.every((chunk) => chunk.object === 'chat.completion.chunk'));
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '', refusal: null });
    const deltas = chunks.slice(1, -2).map((chunk) => chunk.choices[0].delta);
    assert.equal(deltas.map((delta) => delta.reasoning_content ?? '').join(''), 'think');
    assert.equal(deltas.map((delta) => delta.content ?? '').join(''), 'Hello world');
    const toolDeltas = deltas.filter((delta) => delta.tool_calls).map((delta) => delta.tool_calls[0]);
    assert.deepEqual(toolDeltas[0], { index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } });
    assert.equal(
      toolDeltas
        .slice(1)
        .map((call) => call.function.arguments)
        .join(''),
      '{"city":"Paris"}',
    );
    assert.ok(toolDeltas.slice(1).every((call) => call.id === undefined && call.index === 0));
    const finish = chunks.at(-2);
    assert.deepEqual(finish.choices[0].delta, {});
    assert.equal(finish.choices[0].finish_reason, 'tool_calls');
    assert.equal(finish.usage, null);
    const usage = chunks.at(-1);
    assert.deepEqual(usage.choices, []);
    assert.equal(usage.usage.prompt_tokens, 50);
    assert.equal(usage.usage.prompt_tokens_details.cached_tokens, 10);
    assert.equal(usage.usage.completion_tokens_details.reasoning_tokens, 5);
  });

  test('leaves the usage chunk out without include_usage', async () => {
    const all = await events(await post('/v1/chat/completions', chat('gpt-x', { stream: true })));
    const last = JSON.parse(all.at(-2)!.data);
    assert.equal(last.choices[0].finish_reason, 'stop');
    assert.equal('usage' in last, false);
  });
});

describe('Anthropic format', () => {
  test('answers with thinking, text and tool_use blocks and split usage', async () => {
    fake.script('claude-x', {
      reasoning: 'hmm',
      text: 'Let me check.',
      toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      usage: { prompt: 100, cached: 60, cacheWrite: 10, completion: 30 },
    });
    const body = (await (await post('/v1/messages', messages('claude-x'))).json()) as any;
    assert.equal(body.type, 'message');
    assert.deepEqual(body.content, [
      { type: 'thinking', thinking: 'hmm', signature: 'fake-signature-EqQBCgIYAhIM' },
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
    ]);
    assert.equal(body.stop_reason, 'tool_use');
    assert.equal(body.stop_sequence, null);
    assert.deepEqual(
      { ...body.usage, service_tier: undefined },
      { input_tokens: 30, cache_read_input_tokens: 60, cache_creation_input_tokens: 10, output_tokens: 30, service_tier: undefined },
    );
  });

  test('streams events in Anthropic order', async () => {
    fake.script('claude-x', {
      reasoning: 'hmm',
      text: 'Hi',
      toolCalls: [{ name: 'lookup', arguments: '{"q":1}' }],
      usage: { prompt: 10, completion: 7 },
      ping: true,
    });
    const all = await events(await post('/v1/messages', messages('claude-x', { stream: true })));
    assert.deepEqual(
      all.map((event) => event.event),
      [
        'message_start',
        'ping',
        'content_block_start',
        'content_block_delta',
        'content_block_delta',
        'content_block_stop',
        'content_block_start',
        'content_block_delta',
        'content_block_stop',
        'content_block_start',
        'content_block_delta',
        'content_block_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ],
    );
    const data = all.map((event) => JSON.parse(event.data));
    assert.ok(data.every((payload, index) => payload.type === all[index]!.event));
    assert.deepEqual(data[0].message.content, []);
    assert.equal(data[0].message.usage.input_tokens, 10);
    assert.deepEqual(data[3].delta, { type: 'thinking_delta', thinking: 'hmm' });
    assert.equal(data[4].delta.type, 'signature_delta');
    assert.match(data[9].content_block.id, /^toolu_/);
    assert.deepEqual(data[11].delta, { type: 'input_json_delta', partial_json: '{"q":1}' });
    assert.deepEqual(data[13], { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 7 } });
  });

  test('rejects what the real API rejects', async () => {
    const noVersion = await fetch(`${fake.url}/v1/messages`, { method: 'POST', body: JSON.stringify(messages('claude-x')) });
    assert.equal(noVersion.status, 400);
    assert.deepEqual(await noVersion.json(), {
      type: 'error',
      error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' },
    });
    const badThinking = await post('/v1/messages', messages('claude-x', { thinking: { type: 'enabled', budget_tokens: 2048 }, temperature: 0.2 }));
    assert.equal(badThinking.status, 400);
  });
});

describe('faults', () => {
  test('error statuses carry the format shape and headers', async () => {
    fake.script('claude-x', { status: 529 });
    fake.script('gpt-x', { status: 429, headers: { 'retry-after': '3' } });
    const overloaded = await post('/v1/messages', messages('claude-x'));
    assert.equal(overloaded.status, 529);
    assert.deepEqual(await overloaded.json(), { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    const limited = await post('/v1/chat/completions', chat('gpt-x'));
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '3');
    assert.equal(((await limited.json()) as any).error.code, 'rate_limit_exceeded');
  });

  test('malformed bodies and events', async () => {
    fake.script('gpt-x', { malformed: true }, { malformed: true });
    const body = await (await post('/v1/chat/completions', chat('gpt-x'))).text();
    assert.throws(() => JSON.parse(body));
    const all = await events(await post('/v1/chat/completions', chat('gpt-x', { stream: true })));
    assert.doesNotThrow(() => JSON.parse(all[0]!.data));
    assert.throws(() => JSON.parse(all[1]!.data));
    assert.equal(all.length, 2);
  });

  test('dieAfterChunks cuts the connection mid-stream', async () => {
    fake.script('claude-x', { text: 'abcdefghij', chunkSize: 2, dieAfterChunks: 2 });
    const response = await post('/v1/messages', messages('claude-x', { stream: true }));
    const seen: SseEvent[] = [];
    await assert.rejects(async () => {
      for await (const event of parseSse(response.body as unknown as AsyncIterable<Uint8Array>)) seen.push(event);
    });
    assert.equal(seen.filter((event) => event.event === 'content_block_delta').length, 2);
    assert.equal(fake.abortedCount, 0);
  });

  test('errorAfterChunks sends an in-stream error event', async () => {
    fake.script('claude-x', { text: 'abcdef', chunkSize: 2, errorAfterChunks: 1 });
    const all = await events(await post('/v1/messages', messages('claude-x', { stream: true })));
    assert.equal(all.at(-1)!.event, 'error');
    assert.equal(JSON.parse(all.at(-1)!.data).error.type, 'overloaded_error');
  });

  test('a hanging request counts as aborted when the client leaves', async () => {
    fake.script('gpt-x', { hang: true });
    const controller = new AbortController();
    const pending = post('/v1/chat/completions', chat('gpt-x'), { signal: controller.signal });
    await waitUntil(() => fake.requests.length === 1);
    controller.abort();
    await assert.rejects(pending);
    await fake.waitForAborted(1);
    assert.equal(fake.abortedCount, 1);
  });

  test('headerDelayMs and chunkDelayMs slow the answer down', async () => {
    fake.script('gpt-x', { headerDelayMs: 60, chunkDelayMs: 10, text: 'abcd', chunkSize: 1 });
    const started = Date.now();
    await events(await post('/v1/chat/completions', chat('gpt-x', { stream: true })));
    assert.ok(Date.now() - started >= 60 + 5 * 10);
  });
});

test('close() ends hanging connections', async () => {
  const other = await startFakeUpstream();
  other.script('gpt-x', { hang: true });
  const pending = fetch(`${other.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(chat('gpt-x')) });
  await waitUntil(() => other.requests.length === 1);
  await other.close();
  await assert.rejects(pending);
});

async function waitUntil(condition: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 200 && !condition(); attempt++) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.ok(condition(), 'condition never became true');
}
