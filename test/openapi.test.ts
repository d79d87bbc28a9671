import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { FIX_INPUT, GOOD_EDIT, readEvents } from './helpers/fix-fixtures.ts';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';

interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: unknown; example?: unknown }> }> }>>;
  components: { schemas: Record<string, unknown> };
}

const DOCUMENT_ID = 'https://gateway.test/openapi.json';
const pointer = (...parts: string[]) => parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** Checks answers against the document with a JSON Schema 2020-12 validator: documented status, content type and body. */
class DocumentChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();
  readonly checked = new Set<string>();

  constructor(readonly document: OpenApiDocument) {
    this.ajv.addSchema({ ...document, $id: DOCUMENT_ID });
  }

  validator(path: string): ValidateFunction {
    let validate = this.compiled.get(path);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}#/${path}` });
      this.compiled.set(path, validate);
    }
    return validate;
  }

  assertValid(path: string, value: unknown, what: string): void {
    const validate = this.validator(path);
    assert.ok(validate(value), `${what} does not match ${path}: ${JSON.stringify(validate.errors, null, 1)}\n${JSON.stringify(value)}`);
  }

  /** The response of `method template` matches what the document says of its status; returns the JSON body or the SSE events. */
  async check(method: 'get' | 'post', template: string, response: Response): Promise<unknown> {
    const operation = this.document.paths[template]?.[method];
    assert.ok(operation, `${method} ${template} is not in the document`);
    const status = String(response.status);
    const documented = operation.responses[status];
    assert.ok(documented, `${method} ${template} answered ${status}, which the document does not list`);
    const type = (response.headers.get('content-type') ?? '').split(';')[0]!;
    assert.ok(documented.content[type], `${method} ${template} ${status}: ${type} is not documented`);
    this.checked.add(`${method} ${template} ${status} ${type}`);
    const at = pointer('paths', template, method, 'responses', status, 'content', type, 'schema');
    if (type === 'text/event-stream') return readEvents(response);
    const body = await response.json();
    this.assertValid(at, body, `${method} ${template} ${status}`);
    return body;
  }
}

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
    for (const event of live) checker.assertValid(pointer('components', 'schemas', 'FixRunEvent'), JSON.parse(event.data), 'a fix run event');

    await checker.check('get', '/v1/fix/runs/{id}', await harness.get(`/v1/fix/runs/${run.id}`));
    await checker.check('get', '/v1/fix/runs/{id}', await harness.get('/v1/fix/runs/run_nope'));
    const replay = (await checker.check('get', '/v1/fix/runs/{id}/events', await harness.get(`/v1/fix/runs/${run.id}/events`))) as Array<{
      data: string;
    }>;
    assert.ok(replay.length > 0);
    for (const event of replay) checker.assertValid(pointer('components', 'schemas', 'FixRunEvent'), JSON.parse(event.data), 'a fix run event');
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
