import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { DocumentChecker, pointer, type OpenApiDocument } from './helpers/document-checker.ts';
import { FIX_INPUT, GOOD_EDIT } from './helpers/fix-fixtures.ts';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';

describe('GET /v1/openapi.json', () => {
  let harness: Harness;
  let document: OpenApiDocument;
  let checker: DocumentChecker;

  before(async () => {
    harness = await startHarness();
    const response = await fetch(`${harness.gateway.url}/v1/openapi.json`);
    assert.equal(response.status, 200, 'served without a key');
    document = (await response.json()) as OpenApiDocument;
    checker = new DocumentChecker(document);
  });
  after(() => harness.close());

  test('is a valid OpenAPI 3.1 document listing every /v1 route', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document) as unknown as Record<string, unknown>);
    assert.ok(result.valid, JSON.stringify(result.errors, null, 1));
    assert.equal(validator.version, '3.1');
    const routes = harness.gateway.app
      .printRoutes({ commonPrefix: false })
      .split('\n')
      .map((line) => /(\/v1\/\S*)/.exec(line)?.[1])
      .filter((path): path is string => Boolean(path));
    const documented = Object.keys(document.paths).map((path) => path.replace(/\{(\w+)\}/g, ':$1'));
    for (const route of new Set(routes)) assert.ok(documented.includes(route), `${route} is served but not documented`);
  });

  test('the checker refuses what the schemas do not allow', () => {
    const receipt = document.paths['/v1/receipts/{id}']!.get!.responses['200']!.content['application/json']!.example as Record<string, unknown>;
    const at = pointer('components', 'schemas', 'Receipt');
    assert.equal(checker.validator(at)(receipt), true);
    assert.equal(checker.validator(at)({ ...receipt, surprise: 1 }), false, 'a field the schema does not list');
    assert.equal(checker.validator(at)({ ...receipt, cost: 0.1 }), false, 'USD as a number');
    const { cost: _cost, ...missing } = receipt;
    assert.equal(checker.validator(at)(missing), false, 'a required field missing');
    const notFound = pointer('paths', '/v1/receipts/{id}', 'get', 'responses', '404', 'content', 'application/json', 'schema');
    const envelope = document.paths['/v1/receipts/{id}']!.get!.responses['404']!.content['application/json']!.example as { error: object };
    assert.equal(checker.validator(notFound)(envelope), true);
    assert.equal(checker.validator(notFound)({ error: { ...envelope.error, code: 'rate_limit_exceeded' } }), false, 'a code of another status');
  });

  test('the checker closes every object: a field the document lacks fails, in the wire formats too', () => {
    const message = document.paths['/v1/messages']!.post!.responses['200']!.content['application/json']!.example as Record<string, unknown>;
    const at = pointer('components', 'schemas', 'Message');
    assert.equal(checker.validator(at)(message), true);
    assert.equal(checker.validator(at)({ ...message, surprise: 1 }), false, 'at the top');
    assert.equal(checker.validator(at)({ ...message, usage: { ...(message.usage as object), surprise: 1 } }), false, 'in a nested object');
    const block = { type: 'text', text: 'x', surprise: 1 };
    assert.equal(checker.validator(at)({ ...message, content: [block] }), false, 'in a variant of a union');
  });

  test('every example matches its schema', () => {
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          for (const [type, content] of Object.entries(response.content ?? {})) {
            if (content.example === undefined) continue;
            checker.assertValid(
              pointer('paths', path, method, 'responses', status, 'content', type, 'schema'),
              content.example,
              `example of ${method} ${path} ${status}`,
            );
          }
        }
      }
    }
  });

  test('chat, messages and responses: successes, streams and errors match the document', async () => {
    const chat = { model: 'svc/fast', messages: [{ role: 'user', content: 'hi' }], routing: { fallback: true } };
    await checker.check('post', '/v1/chat/completions', await harness.post('/v1/chat/completions', chat));
    await checker.check('post', '/v1/chat/completions', await harness.post('/v1/chat/completions', { ...chat, stream: true }));
    await checker.check('post', '/v1/chat/completions', await harness.post('/v1/chat/completions', { ...chat, model: 'nope' }));
    await checker.check('post', '/v1/chat/completions', await harness.post('/v1/chat/completions', { ...chat, routing: { fallback: 'no' } }));
    await checker.check('post', '/v1/chat/completions', await harness.post('/v1/chat/completions', chat, 'svc_wrong'));
    const { key: fixOnly } = await harness.createKey({ scopes: ['fix'] });
    await checker.check('post', '/v1/chat/completions', await harness.post('/v1/chat/completions', chat, fixOnly));

    const messages = { model: 'svc/balanced', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] };
    await checker.check('post', '/v1/messages', await harness.post('/v1/messages', messages));
    await checker.check('post', '/v1/messages', await harness.post('/v1/messages', { ...messages, stream: true }));
    const refused = await checker.check('post', '/v1/messages', await harness.post('/v1/messages', { ...messages, messages: 'hi' }));
    assert.equal((refused as { type: string }).type, 'error');
    await checker.check('post', '/v1/messages/count_tokens', await harness.post('/v1/messages/count_tokens', messages));
    await checker.check('post', '/v1/messages/count_tokens', await harness.post('/v1/messages/count_tokens', { ...messages, model: 'nope' }));

    const responses = { model: 'svc/fast', input: 'hi' };
    await checker.check('post', '/v1/responses', await harness.post('/v1/responses', responses));
    await checker.check('post', '/v1/responses', await harness.post('/v1/responses', { ...responses, stream: true }));
    await checker.check('post', '/v1/responses', await harness.post('/v1/responses', { ...responses, previous_response_id: 'resp_1' }));
  });

  test('every shape of answer the three formats render: reasoning, tool calls, stop sequences, usage chunks, truncation, failures mid-stream', async () => {
    const { fake } = harness;
    const reasoned = { reasoning: 'Thinking it over.', text: 'Done.', toolCalls: [{ name: 'lookup', arguments: '{"q":"x"}' }] };
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }];
    const chat = { model: 'up/alpha', messages: [{ role: 'user', content: 'hi' }], tools };
    for (const stream of [false, true]) {
      fake.script('alpha', reasoned);
      await checker.check(
        'post',
        '/v1/chat/completions',
        await harness.post('/v1/chat/completions', { ...chat, stream, stream_options: { include_usage: true } }),
      );
    }
    fake.script('alpha', { text: 'abcdefghijklmnop', chunkSize: 2, errorAfterChunks: 2 });
    await checker.check('post', '/v1/chat/completions', await harness.post('/v1/chat/completions', { ...chat, stream: true }));

    // Anthropic-format providers sign their thinking; OpenAI-format ones do not (the signature is "").
    const messages = { max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], tools: [{ name: 'lookup', input_schema: { type: 'object' } }] };
    for (const [model, upstream] of [
      ['anth/claude', 'claude-x'],
      ['up/alpha', 'alpha'],
    ] as const) {
      for (const stream of [false, true]) {
        fake.script(upstream, reasoned);
        await checker.check('post', '/v1/messages', await harness.post('/v1/messages', { ...messages, model, stream }));
      }
    }
    for (const stream of [false, true]) {
      fake.script('claude-x', { text: 'one two END', finishReason: 'stop_sequence' });
      const stopped = await checker.check(
        'post',
        '/v1/messages',
        await harness.post('/v1/messages', { ...messages, model: 'anth/claude', stream, stop_sequences: ['END'] }),
      );
      if (!stream) assert.equal((stopped as { stop_sequence: string }).stop_sequence, 'END');
    }
    fake.script('claude-x', { text: 'abcdefghijklmnop', chunkSize: 2, errorAfterChunks: 2 });
    await checker.check('post', '/v1/messages', await harness.post('/v1/messages', { ...messages, model: 'anth/claude', stream: true }));

    const responses = {
      model: 'up/alpha',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
      instructions: 'Be brief.',
      reasoning: { effort: 'low', summary: 'auto' },
      tools: [
        { type: 'function', name: 'lookup', parameters: { type: 'object' } },
        { type: 'custom', name: 'apply_patch', format: { type: 'grammar', syntax: 'lark', definition: 'start: "x"' } },
        { type: 'namespace', name: 'fs', tools: [{ type: 'function', name: 'read' }] },
      ],
      metadata: { ticket: '42' },
      user: 'user-1',
      prompt_cache_key: 'conversation-1',
      max_output_tokens: 500,
    };
    const calls = [
      { name: 'lookup', arguments: '{"q":"x"}' },
      { name: 'apply_patch', arguments: '{"input":"*** Begin Patch"}' },
      { name: 'fs__read', arguments: '{}' },
    ];
    for (const stream of [false, true]) {
      fake.script('alpha', { reasoning: 'Thinking.', text: 'Done.', toolCalls: calls });
      await checker.check('post', '/v1/responses', await harness.post('/v1/responses', { ...responses, stream }));
      fake.script('alpha', { text: 'cut sh', finishReason: 'length' });
      await checker.check('post', '/v1/responses', await harness.post('/v1/responses', { ...responses, stream }));
    }
    fake.script('alpha', { text: 'abcdefghijklmnop', chunkSize: 2, errorAfterChunks: 2 });
    await checker.check('post', '/v1/responses', await harness.post('/v1/responses', { ...responses, stream: true }));
    fake.reset();
  });

  test('invalid bodies of the three formats: invalid_request naming the field, as documented', async () => {
    const chat = await checker.check(
      'post',
      '/v1/chat/completions',
      await harness.post('/v1/chat/completions', { model: 'svc/fast', messages: [{ role: 'wizard' }] }),
    );
    assert.match((chat as { error: { message: string } }).error.message, /^messages\[0\]\.role /);
    const messages = await checker.check(
      'post',
      '/v1/messages',
      await harness.post('/v1/messages', { model: 'svc/balanced', messages: [{ role: 'user', content: [{ type: 'audio' }] }] }),
    );
    assert.match((messages as { error: { message: string } }).error.message, /^messages\[0\]\.content\[0\]\.type /);
    const responses = await checker.check(
      'post',
      '/v1/responses',
      await harness.post('/v1/responses', { model: 'svc/fast', input: [{ type: 'item_reference', id: 'x' }] }),
    );
    assert.match((responses as { error: { message: string } }).error.message, /^input\[0\]: item_reference/);
  });

  test('models, receipts and balance: both shapes, pages and errors match the document', async () => {
    await checker.check('get', '/v1/models', await harness.get('/v1/models'));
    const anthropic = { authorization: `Bearer ${harness.key}`, 'anthropic-version': '2023-06-01' };
    await checker.check('get', '/v1/models', await fetch(`${harness.gateway.url}/v1/models?limit=2`, { headers: anthropic }));
    const refused = await checker.check('get', '/v1/models', await fetch(`${harness.gateway.url}/v1/models?limit=0`, { headers: anthropic }));
    assert.equal((refused as { type: string }).type, 'error', 'Anthropic-shaped with the header');

    const list = (await checker.check('get', '/v1/receipts', await harness.get('/v1/receipts?limit=5'))) as { data: Array<{ id: string }> };
    assert.ok(list.data.length > 0);
    await checker.check('get', '/v1/receipts', await harness.get('/v1/receipts?limit=0'));
    await checker.check('get', '/v1/receipts', await harness.get('/v1/receipts?before=yesterday'));
    await checker.check('get', '/v1/receipts/{id}', await harness.get(`/v1/receipts/${list.data[0]!.id}`));
    await checker.check('get', '/v1/receipts/{id}', await harness.get('/v1/receipts/rcpt_nope'));

    await checker.check('get', '/v1/balance', await harness.get('/v1/balance'));
    await checker.check('get', '/v1/balance', await harness.get('/v1/balance', 'svc_wrong'));
  });

  test('fix agents: agents, quote, run, events, cancel and their errors match the document', async () => {
    await checker.check('get', '/v1/fix/agents', await harness.get('/v1/fix/agents'));
    await checker.check('get', '/v1/fix/agents', await harness.get('/v1/fix/agents', 'svc_wrong'));
    const quoteBody = { agent: 'code-fix', tier: 'fast', ...FIX_INPUT };
    const quote = (await checker.check('post', '/v1/fix/quote', await harness.post('/v1/fix/quote', quoteBody))) as { id: string };
    await checker.check('post', '/v1/fix/quote', await harness.post('/v1/fix/quote', { ...quoteBody, tier: 'slow' }));

    harness.fake.reset();
    harness.fake.script('alpha', { text: GOOD_EDIT });
    const run = (await checker.check('post', '/v1/fix/runs', await harness.post('/v1/fix/runs', { quote: quote.id }))) as { id: string };
    await checker.check('post', '/v1/fix/runs', await harness.post('/v1/fix/runs', { quote: 'quote_nope' }));
    await checker.check('post', '/v1/fix/runs', await harness.post('/v1/fix/runs', { quote: quote.id, extra: 1 }));

    const streamed = (await checker.check('post', '/v1/fix/quote', await harness.post('/v1/fix/quote', quoteBody))) as { id: string };
    harness.fake.script('alpha', { text: GOOD_EDIT });
    const live = (await checker.check('post', '/v1/fix/runs', await harness.post('/v1/fix/runs', { quote: streamed.id, stream: true }))) as Array<{
      data: string;
    }>;
    assert.ok(live.length > 0);

    await checker.check('get', '/v1/fix/runs/{id}', await harness.get(`/v1/fix/runs/${run.id}`));
    await checker.check('get', '/v1/fix/runs/{id}', await harness.get('/v1/fix/runs/run_nope'));
    const replay = (await checker.check('get', '/v1/fix/runs/{id}/events', await harness.get(`/v1/fix/runs/${run.id}/events`))) as Array<{
      data: string;
    }>;
    assert.ok(replay.length > 0);
    await checker.check('get', '/v1/fix/runs/{id}/events', await harness.get('/v1/fix/runs/run_nope/events'));
    const resumed = await checker.check('get', '/v1/fix/runs/{id}/events', await harness.get(`/v1/fix/runs/${run.id}/events?after=1`));
    assert.equal((resumed as unknown[]).length, replay.length - 1);
    await checker.check('get', '/v1/fix/runs/{id}/events', await harness.get(`/v1/fix/runs/${run.id}/events?after=-1`));
    await checker.check('post', '/v1/fix/runs/{id}/cancel', await harness.post(`/v1/fix/runs/${run.id}/cancel`, {}));
    await checker.check('post', '/v1/fix/runs/{id}/cancel', await harness.post('/v1/fix/runs/run_nope/cancel', {}));
  });

  test('the document itself, and every operation answered with a success and an error', async () => {
    await checker.check('get', '/v1/openapi.json', await fetch(`${harness.gateway.url}/v1/openapi.json`));
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const method of Object.keys(methods)) {
        const statuses = [...checker.checked].filter((entry) => entry.startsWith(`${method} ${path} `)).map((entry) => entry.split(' ')[2]!);
        assert.ok(statuses.includes('200'), `${method} ${path}: no success checked`);
        if (path !== '/v1/openapi.json')
          assert.ok(
            statuses.some((status) => status >= '400'),
            `${method} ${path}: no error checked`,
          );
      }
    }
  });
});
