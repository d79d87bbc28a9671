import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { configSchema, type ModelConfig, type ProviderConfig } from '../../config/schema.ts';
import type { ChatRequest } from '../../canonical/chat-request.ts';
import type { StreamPart } from '../../canonical/stream-part.ts';
import { startFakeUpstream, type FakeUpstream } from '../../../test/fake-upstream/fake-upstream.ts';
import type { ProviderAdapter, ProviderCall } from '../provider.ts';
import { ProviderError, type ProviderFailure } from '../provider-error.ts';
import { createAnthropicProvider } from './anthropic-provider.ts';

const API_KEY = 'sk-ant-test-0123456789secret';
const UPSTREAM = 'claude-sonnet-test';

let fake: FakeUpstream;
let provider: ProviderAdapter;
let model: ModelConfig;

/** Real config objects, parsed by the real schema, so the adapter sees what it will see in production. */
function buildConfig(baseUrl: string, timeoutMs = 2_000): { provider: ProviderConfig; model: ModelConfig } {
  const alias = { candidates: ['claude/sonnet'], reasoning: 'low' };
  const config = configSchema.parse({
    providers: [
      {
        id: 'claude',
        kind: 'anthropic',
        base_url: `${baseUrl}/`,
        api_key: API_KEY,
        timeout_ms: timeoutMs,
        connections: 4,
        headers: { 'anthropic-beta': 'test-beta' },
      },
    ],
    models: [
      {
        id: 'claude/sonnet',
        provider: 'claude',
        upstream: UPSTREAM,
        price: { input: '3', output: '15' },
        context_window: 200_000,
        max_output_tokens: 64_000,
        capabilities: { tools: true, vision: true, reasoning: true },
      },
    ],
    aliases: { 'svc/fast': alias, 'svc/balanced': alias, 'svc/best': alias },
  });
  return { provider: config.providers[0]!, model: config.models[0]! };
}

function call(request: Partial<ChatRequest> = {}, options: Partial<ProviderCall> = {}): ProviderCall {
  return {
    request: { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], passThrough: { format: 'openai', fields: {} }, ...request },
    model,
    maxOutputTokens: 4_096,
    signal: new AbortController().signal,
    ...options,
  };
}

async function collect(parts: AsyncIterable<StreamPart>): Promise<{ parts: StreamPart[]; error?: ProviderError }> {
  const collected: StreamPart[] = [];
  try {
    for await (const part of parts) collected.push(part);
    return { parts: collected };
  } catch (error) {
    assert.ok(error instanceof ProviderError, `expected a ProviderError, got ${String(error)}`);
    return { parts: collected, error };
  }
}

function assertFailure(failure: ProviderFailure) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof ProviderError, `expected a ProviderError, got ${String(error)}`);
    assert.equal(error.failure, failure, error.message);
    return true;
  };
}

before(async () => {
  fake = await startFakeUpstream();
  const config = buildConfig(fake.url);
  model = config.model;
  provider = createAnthropicProvider(config.provider);
});
after(async () => {
  await provider.close();
  await fake.close();
});
beforeEach(() => fake.reset());

describe('generate', () => {
  test('sends the Messages request and returns text, reasoning, tool calls and usage', async () => {
    fake.script(UPSTREAM, {
      reasoning: 'The user wants weather.',
      text: 'Let me check.',
      toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      usage: { prompt: 1_000, cached: 800, cacheWrite: 100, completion: 50 },
    });
    const result = await provider.generate(
      call(
        {
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
          ],
          tools: [{ name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
          passThrough: { format: 'anthropic', fields: { metadata: { user_id: 'u1' } } },
        },
        { reasoningEffort: 'low' },
      ),
    );

    assert.equal(fake.requests.length, 1);
    const sent = fake.requests[0]!;
    assert.equal(sent.path, '/v1/messages');
    assert.equal(sent.headers['x-api-key'], API_KEY);
    assert.equal(sent.headers['anthropic-version'], '2023-06-01');
    assert.equal(sent.headers['anthropic-beta'], 'test-beta');
    assert.deepEqual(sent.body, {
      metadata: { user_id: 'u1' },
      model: UPSTREAM,
      max_tokens: 4_096,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] }],
      system: 'Be brief.',
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
      thinking: { type: 'enabled', budget_tokens: 2_048 },
    });

    assert.deepEqual(result, {
      content: 'Let me check.',
      reasoning: 'The user wants weather.',
      reasoningBlocks: [{ text: 'The user wants weather.', providerMetadata: { anthropic: { signature: 'fake-signature-EqQBCgIYAhIM' } } }],
      toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      finishReason: 'tool_calls',
      usage: { inputTokens: 1_000, cachedInputTokens: 800, cacheWriteTokens: 100, outputTokens: 50, reasoningTokens: 0 },
    });
  });

  test('reuses one keep-alive connection across calls', async () => {
    await provider.generate(call());
    await provider.generate(call());
    await collect(provider.stream(call()));
    await provider.generate(call());
    assert.equal(fake.requests.length, 4);
    // At most one new connection: the one an earlier test left in the pool may serve them all.
    assert.ok(fake.connectionCount <= 1, `${fake.connectionCount} new connections for 4 calls`);
  });

  test("sends the client's betas beside the configured ones", async () => {
    await provider.generate(call({ providerOptions: { anthropic: { betas: ['context-management-2025-06-27', 'test-beta'] } } }));
    await provider.generate(call());
    assert.equal(fake.requests[0]!.headers['anthropic-beta'], 'test-beta,context-management-2025-06-27');
    assert.equal(fake.requests[1]!.headers['anthropic-beta'], 'test-beta');
  });

  test("sends the client's anthropic-version; one that is not a date stays behind with a warning", async () => {
    const warnings: string[] = [];
    await provider.generate(call({ providerOptions: { anthropic: { version: '2024-10-22' } } }));
    await provider.generate(call({ providerOptions: { anthropic: { version: 'latest' } } }, { warn: (message) => warnings.push(message) }));
    assert.equal(fake.requests[0]!.headers['anthropic-version'], '2024-10-22');
    assert.equal(fake.requests[1]!.headers['anthropic-version'], '2023-06-01');
    assert.deepEqual(warnings, ['anthropic-version latest: not a version; sent as 2023-06-01']);
  });

  test('a body that is not JSON is an invalid response', async () => {
    fake.script(UPSTREAM, { malformed: true });
    await assert.rejects(provider.generate(call()), assertFailure('invalid_response'));
  });
});

describe('stream', () => {
  test('streams thinking, text and tool calls, then one finish with cache-aware usage', async () => {
    fake.script(UPSTREAM, {
      reasoning: 'Need the weather.',
      text: 'Checking both.',
      toolCalls: [
        { id: 'toolu_p', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { id: 'toolu_r', name: 'get_weather', arguments: '{"city":"Rome"}' },
      ],
      usage: { prompt: 2_000, cached: 1_500, cacheWrite: 300, completion: 120 },
      chunkSize: 5,
      ping: true,
    });
    const { parts, error } = await collect(provider.stream(call({}, { reasoningEffort: 'medium', maxOutputTokens: 16_000 })));
    assert.equal(error, undefined);

    const body = fake.requests[0]!.body as Record<string, unknown>;
    assert.equal(body.stream, true);
    assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 8_192 });

    const text = (type: StreamPart['type']) =>
      parts
        .filter((part) => part.type === type)
        .map((part) => (part as { text: string }).text)
        .join('');
    assert.equal(text('reasoning-delta'), 'Need the weather.');
    const signatureAt = parts.findIndex((part) => part.type === 'reasoning-end');
    assert.deepEqual(parts[signatureAt], { type: 'reasoning-end', providerMetadata: { anthropic: { signature: 'fake-signature-EqQBCgIYAhIM' } } });
    assert.ok(signatureAt > parts.findLastIndex((part) => part.type === 'reasoning-delta'), 'the signature closes the thinking');
    assert.ok(signatureAt < parts.findIndex((part) => part.type === 'text-delta'));
    assert.equal(text('text-delta'), 'Checking both.');
    assert.deepEqual(
      parts.filter((part) => part.type === 'tool-call-start'),
      [
        { type: 'tool-call-start', index: 0, id: 'toolu_p', name: 'get_weather' },
        { type: 'tool-call-start', index: 1, id: 'toolu_r', name: 'get_weather' },
      ],
    );
    for (const index of [0, 1]) {
      const argumentsText = parts
        .filter((part) => part.type === 'tool-call-delta' && part.index === index)
        .map((part) => (part as { argumentsDelta: string }).argumentsDelta)
        .join('');
      assert.equal(argumentsText, index === 0 ? '{"city":"Paris"}' : '{"city":"Rome"}');
    }
    assert.equal(parts.filter((part) => part.type === 'finish').length, 1);
    assert.deepEqual(parts.at(-1), {
      type: 'finish',
      finishReason: 'tool_calls',
      usage: { inputTokens: 2_000, cachedInputTokens: 1_500, cacheWriteTokens: 300, outputTokens: 120, reasoningTokens: 0 },
    });
  });

  test('a dying connection throws after the parts already received', async () => {
    fake.script(UPSTREAM, { text: 'abcdefghijkl', chunkSize: 3, dieAfterChunks: 2 });
    const { parts, error } = await collect(provider.stream(call()));
    assert.deepEqual(parts, [
      { type: 'text-delta', text: 'abc' },
      { type: 'text-delta', text: 'def' },
    ]);
    assert.equal(error?.failure, 'unavailable');
  });

  test('an error event mid-stream throws unavailable; before any part, from the first next()', async () => {
    fake.script(UPSTREAM, { text: 'abcdef', chunkSize: 2, errorAfterChunks: 1 }, { text: 'abcdef', errorAfterChunks: 0 });
    const late = await collect(provider.stream(call()));
    assert.deepEqual(late.parts, [{ type: 'text-delta', text: 'ab' }]);
    assert.equal(late.error?.failure, 'unavailable');
    assert.match(late.error!.message, /overloaded_error: Overloaded/);
    await assert.rejects(provider.stream(call())[Symbol.asyncIterator]().next(), assertFailure('unavailable'));
  });

  test('an event that is not JSON is an invalid response', async () => {
    fake.script(UPSTREAM, { malformed: true });
    const { parts, error } = await collect(provider.stream(call()));
    assert.deepEqual(parts, []);
    assert.equal(error?.failure, 'invalid_response');
  });

  test('a 200 that is not an event stream is an invalid response', async () => {
    fake.script(UPSTREAM, { headers: { 'content-type': 'application/json' } });
    await assert.rejects(provider.stream(call())[Symbol.asyncIterator]().next(), assertFailure('invalid_response'));
  });
});

describe('errors', () => {
  const cases: Array<[number, ProviderFailure, RegExp]> = [
    [400, 'bad_request', /HTTP 400: Invalid request/],
    [401, 'auth', /HTTP 401: invalid x-api-key/],
    [429, 'rate_limited', /HTTP 429: Number of request tokens/],
    [500, 'unavailable', /HTTP 500: Internal server error/],
    [529, 'unavailable', /HTTP 529: Overloaded/],
  ];
  for (const [status, failure, message] of cases) {
    test(`HTTP ${status} -> ${failure}, from generate and from the first next() of stream`, async () => {
      fake.script(UPSTREAM, { status }, { status });
      await assert.rejects(provider.generate(call()), (error: unknown) => {
        assertFailure(failure)(error);
        const providerError = error as ProviderError;
        assert.equal(providerError.status, status);
        assert.match(providerError.message, message);
        return true;
      });
      await assert.rejects(provider.stream(call())[Symbol.asyncIterator]().next(), assertFailure(failure));
    });
  }

  test('never puts the API key in an error message, even when the upstream echoes it', async () => {
    fake.script(UPSTREAM, { status: 401, errorBody: { type: 'error', error: { type: 'authentication_error', message: `bad key ${API_KEY}` } } });
    await assert.rejects(provider.generate(call()), (error: unknown) => {
      assert.ok(error instanceof ProviderError);
      assert.ok(!error.message.includes(API_KEY), error.message);
      assert.match(error.message, /bad key \[redacted\]/);
      return true;
    });
  });

  test('a clamped thinking budget passes the checks the real API makes', async () => {
    await provider.generate(call({ temperature: 0.5 }, { reasoningEffort: 'xhigh', maxOutputTokens: 1_500 }));
    const body = fake.requests[0]!.body as Record<string, unknown>;
    assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 1_499 });
    assert.equal('temperature' in body, false);
  });

  test('connection refused -> unavailable', async () => {
    const closed = await startFakeUpstream();
    const url = closed.url;
    await closed.close();
    const unreachable = createAnthropicProvider(buildConfig(url).provider);
    try {
      await assert.rejects(unreachable.generate(call()), assertFailure('unavailable'));
      await assert.rejects(unreachable.stream(call())[Symbol.asyncIterator]().next(), assertFailure('unavailable'));
    } finally {
      await unreachable.close();
    }
  });
});

describe('timeouts and cancellation', () => {
  let slow: ProviderAdapter;
  before(() => {
    slow = createAnthropicProvider(buildConfig(fake.url, 300).provider);
  });
  after(async () => {
    await slow.close();
  });

  test('no headers within timeout_ms -> timeout', async () => {
    fake.script(UPSTREAM, { hang: true }, { hang: true });
    await assert.rejects(slow.generate(call()), assertFailure('timeout'));
    await assert.rejects(slow.stream(call())[Symbol.asyncIterator]().next(), assertFailure('timeout'));
  });

  test('a stream that stalls longer than timeout_ms between pieces -> timeout after the parts so far', async () => {
    fake.script(UPSTREAM, { text: 'abc', chunkSize: 3, chunkDelayMs: 2_500 });
    const { parts, error } = await collect(slow.stream(call()));
    assert.equal(error?.failure, 'timeout');
    assert.ok(parts.length <= 1);
  });

  test('aborting the signal cancels generate and closes the upstream connection', async () => {
    fake.script(UPSTREAM, { hang: true });
    const controller = new AbortController();
    const pending = provider.generate(call({}, { signal: controller.signal }));
    await waitUntil(() => fake.requests.length === 1);
    controller.abort();
    await assert.rejects(pending, assertFailure('cancelled'));
    await fake.waitForAborted(1);
  });

  test('aborting the signal mid-stream cancels the stream and closes the upstream connection', async () => {
    fake.script(UPSTREAM, { text: 'x'.repeat(200), chunkSize: 10, chunkDelayMs: 20 });
    const controller = new AbortController();
    const iterator = provider.stream(call({}, { signal: controller.signal }))[Symbol.asyncIterator]();
    const first = await iterator.next();
    assert.deepEqual(first.value, { type: 'text-delta', text: 'x'.repeat(10) });
    controller.abort();
    await assert.rejects(iterator.next(), assertFailure('cancelled'));
    await fake.waitForAborted(1);
  });

  test('a consumer that stops reading early closes the upstream connection', async () => {
    fake.script(UPSTREAM, { text: 'y'.repeat(200), chunkSize: 10, chunkDelayMs: 20 });
    for await (const part of provider.stream(call())) {
      assert.equal(part.type, 'text-delta');
      break;
    }
    await fake.waitForAborted(1);
  });
});

async function waitUntil(condition: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 200 && !condition(); attempt++) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.ok(condition(), 'condition never became true');
}
