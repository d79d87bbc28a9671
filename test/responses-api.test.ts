import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { issueApiKey } from '../src/auth/issue-api-key.ts';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';

let harness: Harness;
let client: OpenAI;

before(async () => {
  harness = await startHarness();
  client = new OpenAI({ baseURL: harness.baseURL, apiKey: harness.key, maxRetries: 0 });
});
after(() => harness.close());
beforeEach(() => harness.fake.reset());

/** What Codex CLI sends on its third turn (built from a logged request, see issue 4). */
const codexRequest = JSON.parse(readFileSync(new URL('./fixtures/codex-responses-request.json', import.meta.url), 'utf8'));

/** Fields of a Responses request that have no place in a provider request. */
const RESPONSES_ONLY_FIELDS = ['input', 'instructions', 'store', 'include', 'reasoning', 'text', 'previous_response_id', 'truncation', 'routing'];

interface SseEvent {
  event: string;
  data: any;
}

/** Every event of a Responses stream, each checked to name its type twice (event line and data). */
function parseEvents(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const event = /^event: (.+)$/m.exec(block)?.[1] ?? '';
      const data = JSON.parse(/^data: (.+)$/m.exec(block)![1]!);
      assert.equal(event, data.type, `event line and data type agree: ${block}`);
      return { event, data };
    });
}

async function receiptOf(response: Response | { headers: Headers }) {
  return (await harness.get(`/v1/receipts/${response.headers.get('x-svc-receipt-id')}`)).json() as Promise<any>;
}

function assertSequenced(events: SseEvent[]) {
  assert.deepEqual(
    events.map((event) => event.data.sequence_number),
    events.map((_, index) => index),
    'sequence_number counts from 0 without gaps',
  );
  assert.equal(events[0]!.event, 'response.created');
  assert.equal(events[1]!.event, 'response.in_progress');
}

describe('a recorded Codex request', () => {
  test('reaches an OpenAI-format model as chat completions, nothing Responses-only leaking, and streams back', async () => {
    harness.fake.script('beta', { text: 'All 12 tests pass.', usage: { prompt: 3000, completion: 40, cached: 2048, reasoning: 12 } });
    const response = await harness.post('/v1/responses', { ...codexRequest, model: 'up/beta' });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type')!, /^text\/event-stream/);
    assert.equal(response.headers.get('x-svc-model'), 'up/beta');
    const requestId = response.headers.get('x-svc-request-id')!;

    const sent = harness.fake.requests[0]!;
    assert.equal(sent.path, '/v1/chat/completions');
    const body = sent.body as any;
    assert.deepEqual(
      body.messages.map((message: any) => message.role),
      ['system', 'developer', 'user', 'user', 'user', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'user'],
    );
    assert.equal(body.messages[0].content, codexRequest.instructions);
    assert.match(body.messages[1].content, /^<permissions instructions>/);
    assert.equal(body.messages[4].content, 'Why does the test in src/sum.test.ts fail?');
    assert.deepEqual(body.messages[5], {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_kX1q', type: 'function', function: { name: 'shell_command', arguments: codexRequest.input[5].arguments } }],
    });
    assert.deepEqual(body.messages[6], { role: 'tool', tool_call_id: 'call_kX1q', content: codexRequest.input[6].output });
    assert.match(body.messages[7].content, /^The test imports/);
    assert.deepEqual(body.messages[7].tool_calls[0].function, {
      name: 'apply_patch',
      arguments: JSON.stringify({ input: codexRequest.input[8].input }),
    });
    assert.equal(body.messages[8].tool_call_id, 'call_kX2w');
    assert.match(body.messages[10].content, /^Thanks\. Now run the tests/);

    const functionNames = codexRequest.tools.filter((tool: any) => tool.type === 'function').map((tool: any) => tool.name);
    assert.ok(functionNames.length >= 10);
    assert.deepEqual(
      body.tools.map((tool: any) => tool.function.name),
      [...functionNames, 'apply_patch', 'mcp__github__search_issues', 'mcp__github__get_issue'],
    );
    assert.ok(
      body.tools.every((tool: any) => tool.type === 'function'),
      'web_search is dropped, the rest are functions',
    );
    assert.deepEqual(body.tools[0].function.parameters, codexRequest.tools[0].parameters);
    assert.equal(body.tools[0].function.description, codexRequest.tools[0].description);
    assert.equal(body.tool_choice, 'auto');
    assert.equal(body.parallel_tool_calls, true);
    assert.equal(body.reasoning_effort, 'medium');
    assert.equal(body.stream, true);
    assert.equal(body.prompt_cache_key, codexRequest.prompt_cache_key, 'chat completions has prompt_cache_key too');
    for (const field of [...RESPONSES_ONLY_FIELDS, 'verbosity', 'metadata', 'encrypted_content'])
      assert.equal(body[field], undefined, `${field} stays out`);
    assert.ok(!JSON.stringify(body).includes('encrypted'), 'encrypted reasoning never reaches another provider');

    const events = parseEvents(await response.text());
    assertSequenced(events);
    assert.deepEqual(
      events.slice(2).map((event) => event.event),
      [
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.delta',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ],
    );
    const completed = events.at(-1)!.data.response;
    assert.equal(completed.id, `resp_${requestId.slice(4)}`);
    assert.equal(completed.status, 'completed');
    assert.equal(completed.model, 'up/beta');
    assert.equal(completed.store, false);
    assert.equal(completed.output[0].content[0].text, 'All 12 tests pass.');
    assert.deepEqual(completed.usage, {
      input_tokens: 3000,
      input_tokens_details: { cached_tokens: 2048 },
      output_tokens: 40,
      output_tokens_details: { reasoning_tokens: 12 },
      total_tokens: 3040,
    });
  });

  test('is answered by an Anthropic model: reasoning summary, text and a namespaced call come back as Codex items', async () => {
    harness.fake.script('claude-x', {
      reasoning: 'The tests pass; check the issue.',
      text: 'Tests pass. Checking the issue.',
      toolCalls: [{ id: 'toolu_01', name: 'mcp__github__get_issue', arguments: '{"number":7}' }],
      usage: { prompt: 5000, completion: 60, cached: 4000 },
    });
    const response = await harness.post('/v1/responses', { ...codexRequest, model: 'anth/claude' });
    assert.equal(response.status, 200);

    const sent = harness.fake.requests[0]!;
    assert.equal(sent.path, '/v1/messages');
    const body = sent.body as any;
    assert.match(body.system.map?.((block: any) => block.text).join('') ?? body.system, /You are Codex[\s\S]*<permissions instructions>/);
    assert.deepEqual(
      body.messages.map((message: any) => message.role),
      ['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user'],
    );
    const blocks = body.messages.flatMap((message: any) => message.content.map((block: any) => block.type));
    assert.deepEqual(
      blocks.filter((type: string) => type === 'tool_use' || type === 'tool_result'),
      ['tool_use', 'tool_result', 'tool_use', 'tool_result'],
    );
    assert.deepEqual(body.messages[3].content.find((block: any) => block.type === 'tool_use').input, { input: codexRequest.input[8].input });
    assert.equal(body.tools.length, 14, '11 functions, apply_patch and two namespaced tools; no web_search');
    assert.ok(body.tools.some((tool: any) => tool.name === 'mcp__github__get_issue'));
    for (const field of [...RESPONSES_ONLY_FIELDS, 'prompt_cache_key', 'parallel_tool_calls', 'response_format'])
      assert.equal(body[field], undefined, `${field} stays out`);
    assert.ok(!JSON.stringify(body).includes('encrypted'));

    const events = parseEvents(await response.text());
    assertSequenced(events);
    assert.deepEqual(
      events.slice(2).map((event) => `${event.event}${event.data.output_index === undefined ? '' : `@${event.data.output_index}`}`),
      [
        'response.output_item.added@0',
        'response.reasoning_summary_part.added@0',
        ...Array(4).fill('response.reasoning_summary_text.delta@0'),
        'response.reasoning_summary_text.done@0',
        'response.reasoning_summary_part.done@0',
        'response.output_item.done@0',
        'response.output_item.added@1',
        'response.content_part.added@1',
        ...Array(4).fill('response.output_text.delta@1'),
        'response.output_text.done@1',
        'response.content_part.done@1',
        'response.output_item.done@1',
        'response.output_item.added@2',
        ...Array(2).fill('response.function_call_arguments.delta@2'),
        'response.function_call_arguments.done@2',
        'response.output_item.done@2',
        'response.completed',
      ],
    );
    const completed = events.at(-1)!.data.response;
    assert.equal(completed.model, 'anth/claude');
    assert.deepEqual(completed.output[0].summary, [{ type: 'summary_text', text: 'The tests pass; check the issue.' }]);
    assert.deepEqual(completed.output[2], {
      id: completed.output[2].id,
      type: 'function_call',
      status: 'completed',
      arguments: '{"number":7}',
      call_id: 'toolu_01',
      name: 'get_issue',
      namespace: 'mcp__github',
    });
    assert.equal(completed.usage.input_tokens, 5000);
    assert.equal(completed.usage.input_tokens_details.cached_tokens, 4000);
  });
});

describe('tool round trips', () => {
  for (const model of ['up/alpha', 'anth/claude']) {
    test(`function_call -> function_call_output -> answer, on ${model}`, async () => {
      const upstream = model === 'up/alpha' ? 'alpha' : 'claude-x';
      harness.fake.script(upstream, { toolCalls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }] }, { text: 'It is 21 °C in Paris.' });
      const tools: OpenAI.Responses.Tool[] = [
        {
          type: 'function',
          name: 'get_weather',
          description: 'Weather by city',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
          strict: false,
        },
      ];
      const question: OpenAI.Responses.ResponseInputItem = { role: 'user', content: 'Weather in Paris?' };
      const first = await client.responses.create({ model, input: [question], tools, store: false });
      assert.equal(first.output.length, 1);
      const call = first.output[0]!;
      assert.equal(call.type, 'function_call');
      if (call.type !== 'function_call') return;
      assert.equal(call.name, 'get_weather');
      assert.equal(call.arguments, '{"city":"Paris"}');
      assert.equal(first.output_text, '');

      const second = await client.responses.create({
        model,
        // What the SDK returned goes back as it is, as Codex does with store: false.
        input: [
          question,
          ...(first.output as OpenAI.Responses.ResponseInputItem[]),
          { type: 'function_call_output', call_id: call.call_id, output: '{"temp":21}' },
        ],
        tools,
        store: false,
      });
      assert.equal(second.output_text, 'It is 21 °C in Paris.');
      const sent = harness.fake.requests[1]!.body as any;
      if (model === 'up/alpha') {
        assert.deepEqual(
          sent.messages.map((message: any) => message.role),
          ['user', 'assistant', 'tool'],
        );
        assert.equal(sent.messages[1].tool_calls[0].id, call.call_id);
        assert.deepEqual(sent.messages[2], { role: 'tool', tool_call_id: call.call_id, content: '{"temp":21}' });
      } else {
        assert.deepEqual(
          sent.messages.map((message: any) => message.role),
          ['user', 'assistant', 'user'],
        );
        assert.equal(sent.messages[1].content[0].id, call.call_id);
        assert.deepEqual(sent.messages[2].content[0], { type: 'tool_result', tool_use_id: call.call_id, content: '{"temp":21}' });
      }
    });
  }
});

describe('the openai SDK', () => {
  test('responses.create: output_text, usage, the concrete model, headers and a receipt with endpoint responses', async () => {
    harness.fake.script('alpha', { text: 'Paris.', usage: { prompt: 30, completion: 2, cached: 0 } });
    const { data, response } = await client.responses
      .create({ model: 'svc/fast', instructions: 'Answer in one word.', input: 'Capital of France?', max_output_tokens: 64 })
      .withResponse();
    assert.equal(data.object, 'response');
    assert.equal(data.status, 'completed');
    assert.equal(data.model, 'up/alpha');
    assert.equal(data.output_text, 'Paris.');
    assert.equal(data.max_output_tokens, 64);
    assert.deepEqual(
      [data.usage!.input_tokens, data.usage!.output_tokens, data.usage!.total_tokens, data.usage!.input_tokens_details.cached_tokens],
      [30, 2, 32, 0],
    );
    const requestId = response.headers.get('x-svc-request-id')!;
    assert.equal(data.id, `resp_${requestId.slice(4)}`);
    assert.equal(response.headers.get('x-svc-receipt-id'), `rcpt_${requestId.slice(4)}`);
    assert.equal(response.headers.get('x-svc-model'), 'up/alpha');
    const sent = harness.fake.requests[0]!.body as any;
    assert.deepEqual(sent.messages, [
      { role: 'system', content: 'Answer in one word.' },
      { role: 'user', content: 'Capital of France?' },
    ]);
    assert.equal(sent.max_tokens, 64);

    const receipt = await receiptOf(response);
    assert.equal(receipt.endpoint, 'responses');
    assert.equal(receipt.status, 'succeeded');
    assert.equal(receipt.requested_model, 'svc/fast');
    assert.equal(receipt.model, 'up/alpha');
    assert.deepEqual([receipt.usage.prompt_tokens, receipt.usage.completion_tokens], [30, 2]);
    assert.notEqual(receipt.hold, '0.000000000', 'the worst case was held before the call');
    assert.notEqual(receipt.cost, '0.000000000');
  });

  test('streaming with create({stream: true}) and responses.stream().finalResponse()', async () => {
    harness.fake.script('claude-x', { text: 'Bonjour tout le monde', reasoning: 'French greeting.' }, { text: 'Salut' });
    const stream = await client.responses.create({
      model: 'svc/balanced',
      input: 'Greet me in French',
      stream: true,
      reasoning: { summary: 'auto' },
    });
    const types: string[] = [];
    let text = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    assert.equal(text, 'Bonjour tout le monde');
    assert.equal(types[0], 'response.created');
    assert.equal(types.at(-1), 'response.completed');
    assert.ok(types.includes('response.reasoning_summary_text.delta'));
    assert.equal(completed!.model, 'anth/claude');
    assert.ok(completed!.usage!.output_tokens > 0);

    const final = await client.responses.stream({ model: 'svc/balanced', input: 'Shorter' }).finalResponse();
    assert.equal(final.output_text, 'Salut');
    assert.equal(final.status, 'completed');
    assert.ok(final.usage!.input_tokens > 0);
  });
});

describe('failures', () => {
  test('a provider failing mid-stream ends the stream with response.failed carrying the contract error, no response.completed', async () => {
    harness.fake.script('alpha', { text: 'abcdefghijklmnopqrstuvwxyz', chunkSize: 2, errorAfterChunks: 2 });
    const response = await harness.post('/v1/responses', { model: 'up/alpha', input: 'letters', stream: true });
    assert.equal(response.status, 200);
    const events = parseEvents(await response.text());
    assertSequenced(events);
    assert.ok(!events.some((event) => event.event === 'response.completed'));
    const failed = events.at(-1)!;
    assert.equal(failed.event, 'response.failed');
    assert.equal(failed.data.response.status, 'failed');
    const error = failed.data.response.error;
    assert.equal(error.code, 'provider_unavailable');
    assert.equal(error.retryable, true);
    assert.equal(error.request_id, response.headers.get('x-svc-request-id'));
    assert.equal(typeof error.message, 'string');
    const receipt = await receiptOf(response);
    assert.deepEqual([receipt.endpoint, receipt.status, receipt.error_code], ['responses', 'failed', 'provider_unavailable']);
  });

  async function expectError(response: Response, status: number, code: string, retryable = false) {
    assert.equal(response.status, status);
    assert.match(response.headers.get('content-type')!, /application\/json/);
    const body = await response.json();
    assert.equal(body.error.code, code);
    assert.equal(body.error.retryable, retryable);
    assert.equal(body.error.request_id, response.headers.get('x-svc-request-id'));
    return body.error;
  }

  const ask = { model: 'svc/fast', input: 'hello', stream: true };

  test('401, 403 and 400 before the stream starts, in the contract envelope, with receipts', async () => {
    await expectError(await harness.post('/v1/responses', ask, 'svc_not_a_real_key'), 401, 'invalid_api_key');
    const fixOnly = await harness.createKey({ scopes: ['fix'] });
    const forbidden = await harness.post('/v1/responses', ask, fixOnly.key);
    await expectError(forbidden, 403, 'insufficient_scope');
    assert.deepEqual([(await receiptOf(forbidden)).endpoint, (await receiptOf(forbidden)).cost], ['responses', '0.000000000']);
    const aliasOnly = await harness.createKey({ models: ['svc/fast'] });
    await expectError(await harness.post('/v1/responses', { ...ask, model: 'up/alpha' }, aliasOnly.key), 403, 'model_not_allowed');
    const stateful = await expectError(await harness.post('/v1/responses', { ...ask, previous_response_id: 'resp_1' }), 400, 'invalid_request');
    assert.match(stateful.message, /stateless/);
    assert.equal(harness.fake.requests.length, 0);

    // The SDK maps the status to its error classes.
    await assert.rejects(
      new OpenAI({ baseURL: harness.baseURL, apiKey: fixOnly.key, maxRetries: 0 }).responses.create({ model: 'svc/fast', input: 'hi' }),
      (error: unknown) => error instanceof OpenAI.PermissionDeniedError && (error.error as any).code === 'insufficient_scope',
    );
  });

  test('429 rate_limit_exceeded carries retry-after', async () => {
    const { key } = await issueApiKey(harness.gateway.deps.store, { scopes: ['inference'], rateLimitPerMinute: 1 });
    assert.equal((await harness.post('/v1/responses', { ...ask, stream: false }, key)).status, 200);
    const limited = await harness.post('/v1/responses', ask, key);
    await expectError(limited, 429, 'rate_limit_exceeded', true);
    const retryAfter = Number(limited.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `retry-after ${retryAfter}`);
  });

  test('503 provider_unavailable after every candidate failed, before any event was sent', async () => {
    harness.fake.script('alpha', { status: 503 });
    harness.fake.script('beta', { status: 500 });
    const response = await harness.post('/v1/responses', ask);
    const error = await expectError(response, 503, 'provider_unavailable', true);
    assert.match(error.message, /up\/alpha.*up\/beta/);
    assert.equal(harness.fake.requests.length, 2);
    const receipt = await receiptOf(response);
    assert.deepEqual([receipt.endpoint, receipt.status, receipt.stream], ['responses', 'failed', true]);
    assert.deepEqual(
      receipt.attempts.map((attempt: any) => attempt.model),
      ['up/alpha', 'up/beta'],
    );
  });
});
