import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { ChatOpenAI } from '@langchain/openai';
import { generateObject, streamObject } from 'ai';
import { z } from 'zod';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';

const person = z.object({ name: z.string(), age: z.number() });
const ADA = { name: 'Ada', age: 36 };

async function json<T = any>(response: Response): Promise<T> {
  return JSON.parse(await response.text()) as T;
}

describe('pass-through fields keep their wire format', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness();
  });
  after(() => harness.close());

  test("an OpenAI-format client's own fields reach an OpenAI-kind provider unchanged", async () => {
    const fields = { metadata: { ticket: '42' }, user: 'alice', seed: 7, logit_bias: { '50256': -100 }, some_new_field: { nested: [1, 2] } };
    const response = await harness.post('/v1/chat/completions', { model: 'up/alpha', messages: [{ role: 'user', content: 'hi' }], ...fields });
    assert.equal(response.status, 200);
    const sent = harness.fake.requests.at(-1)!.body as Record<string, unknown>;
    for (const [field, value] of Object.entries(fields)) assert.deepEqual(sent[field], value, field);
    const receipt = await json(await harness.get(`/v1/receipts/${response.headers.get('x-svc-receipt-id')}`));
    assert.deepEqual(receipt.warnings, []);
  });

  test('Anthropic fields on /v1/messages served by an OpenAI-kind model: translated where they mean something, else dropped with warnings', async () => {
    const response = await harness.post(
      '/v1/messages',
      {
        model: 'up/alpha',
        max_tokens: 200,
        messages: [{ role: 'user', content: 'hi' }],
        metadata: { user_id: 'user-7' },
        top_k: 5,
        context_management: { edits: [] },
        container: 'container_1',
      },
      harness.key,
      { 'anthropic-version': '2023-06-01' },
    );
    assert.equal(response.status, 200);
    const sent = harness.fake.requests.at(-1)!.body as Record<string, unknown>;
    assert.equal(sent.user, 'user-7', 'metadata.user_id is the end-user id');
    for (const field of ['metadata', 'top_k', 'context_management', 'container']) assert.equal(field in sent, false, field);
    const receipt = await json(await harness.get(`/v1/receipts/${response.headers.get('x-svc-receipt-id')}`));
    assert.deepEqual(
      receipt.warnings.map((warning: string) => warning.split(':').slice(0, 2).join(':').trim()),
      ['up/alpha: top_k', 'up/alpha: context_management', 'up/alpha: container'],
    );
  });

  test("an OpenAI client's fields reaching an Anthropic-kind model: user becomes metadata.user_id, the rest dropped with warnings", async () => {
    const response = await harness.post('/v1/chat/completions', {
      model: 'anth/claude',
      messages: [{ role: 'user', content: 'hi' }],
      user: 'alice',
      seed: 7,
      logit_bias: { '1': 2 },
    });
    assert.equal(response.status, 200);
    const sent = harness.fake.requests.at(-1)!.body as Record<string, unknown>;
    assert.deepEqual(sent.metadata, { user_id: 'alice' });
    assert.equal('seed' in sent || 'logit_bias' in sent || 'user' in sent, false);
    const receipt = await json(await harness.get(`/v1/receipts/${response.headers.get('x-svc-receipt-id')}`));
    assert.equal(receipt.warnings.length, 2);
  });
});

for (const native of [false, true]) {
  describe(`structured output through an alias served by an Anthropic-kind model (${native ? 'native structured outputs' : 'a forced tool'})`, () => {
    let harness: Harness;
    before(async () => {
      harness = await startHarness({
        editConfig: (text) =>
          text
            .replace('svc/balanced: { candidates: [anth/claude, up/alpha]', 'svc/balanced: { candidates: [anth/claude]')
            .replace(
              'capabilities: { tools: true, vision: true, reasoning: true }\n  - id: up/tiny',
              `capabilities: { tools: true, vision: true, reasoning: true, structured_output: ${native} }\n  - id: up/tiny`,
            ),
      });
    });
    after(() => harness.close());

    /** What the fake Anthropic answers: the object as text (native) or as the JSON tool's input. */
    function scriptAnswer(times: number): void {
      const reply = native ? { text: JSON.stringify(ADA) } : { toolCalls: [{ name: 'json_output', arguments: JSON.stringify(ADA) }] };
      for (let index = 0; index < times; index++) harness.fake.script('claude-x', reply);
    }

    function assertAskedForTheSchema(): void {
      const sent = harness.fake.requests.at(-1)!.body as Record<string, any>;
      assert.equal(harness.fake.requests.at(-1)!.path, '/v1/messages');
      if (native) {
        assert.equal(sent.output_config.format.type, 'json_schema');
        assert.deepEqual(Object.keys(sent.output_config.format.schema.properties).sort(), ['age', 'name']);
        assert.equal(sent.tools, undefined);
      } else {
        assert.deepEqual(sent.tool_choice, { type: 'tool', name: 'json_output' });
        assert.deepEqual(Object.keys(sent.tools[0].input_schema.properties).sort(), ['age', 'name']);
        assert.equal(sent.thinking, undefined, 'Anthropic refuses thinking with a forced tool');
      }
    }

    test('the Vercel AI SDK: generateObject and streamObject return the object', async () => {
      const gateway = createOpenAICompatible({ name: 'gateway', baseURL: harness.baseURL, apiKey: harness.key, supportsStructuredOutputs: true });
      scriptAnswer(2);
      const generated = await generateObject({ model: gateway('svc/balanced'), schema: person, prompt: 'Who wrote the first program?' });
      assert.deepEqual(generated.object, ADA);
      assertAskedForTheSchema();
      const streamed = streamObject({ model: gateway('svc/balanced'), schema: person, prompt: 'Who wrote the first program?' });
      for await (const _partial of streamed.partialObjectStream);
      assert.deepEqual(await streamed.object, ADA);
      assertAskedForTheSchema();
    });

    test('LangChain JS: withStructuredOutput returns the object, invoked and streamed', async () => {
      const model = new ChatOpenAI({ model: 'svc/balanced', apiKey: harness.key, configuration: { baseURL: harness.baseURL }, maxRetries: 0 });
      const structured = model.withStructuredOutput(person, { method: 'jsonSchema', name: 'person' });
      scriptAnswer(2);
      assert.deepEqual(await structured.invoke('Who wrote the first program?'), ADA);
      assertAskedForTheSchema();
      let last: unknown;
      for await (const chunk of await structured.stream('Who wrote the first program?')) last = chunk;
      assert.deepEqual(last, ADA);
    });

    test('/v1/responses with text.format: the object is the output text', async () => {
      scriptAnswer(1);
      const response = await harness.post('/v1/responses', {
        model: 'svc/balanced',
        input: 'Who wrote the first program?',
        text: {
          format: {
            type: 'json_schema',
            name: 'person',
            schema: { type: 'object', properties: { name: { type: 'string' }, age: { type: 'number' } } },
          },
        },
      });
      const body = await json(response);
      assert.equal(body.status, 'completed', JSON.stringify(body));
      const message = body.output.find((item: { type: string }) => item.type === 'message');
      assert.deepEqual(JSON.parse(message.content[0].text), ADA);
      assert.equal(
        body.output.some((item: { type: string }) => item.type === 'function_call'),
        false,
      );
      assertAskedForTheSchema();
    });

    test('the chat completion itself: the object is the message text, finish reason stop', async () => {
      scriptAnswer(1);
      const response = await harness.post('/v1/chat/completions', {
        model: 'svc/balanced',
        messages: [{ role: 'user', content: 'Who wrote the first program?' }],
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'person', schema: { type: 'object', properties: { name: { type: 'string' }, age: { type: 'number' } } } },
        },
      });
      const body = await json(response);
      assert.deepEqual(JSON.parse(body.choices[0].message.content), ADA);
      assert.equal(body.choices[0].finish_reason, 'stop');
      assert.equal(body.choices[0].message.tool_calls, undefined);
    });
  });
}

describe('routing prefers candidates that answer in a schema natively', () => {
  test('an alias whose first candidate lacks structured outputs tries the one that has them first', async () => {
    const harness = await startHarness();
    try {
      // svc/balanced is [anth/claude, up/alpha]; anth/claude has no native structured outputs here.
      const response = await harness.post('/v1/chat/completions', {
        model: 'svc/balanced',
        messages: [{ role: 'user', content: 'hi' }],
        response_format: { type: 'json_object' },
      });
      assert.equal(response.headers.get('x-svc-model'), 'up/alpha');
      const plain = await harness.post('/v1/chat/completions', { model: 'svc/balanced', messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(plain.headers.get('x-svc-model'), 'anth/claude');
    } finally {
      await harness.close();
    }
  });
});
