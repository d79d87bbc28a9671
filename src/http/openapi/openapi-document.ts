import { ZodOptional, type ZodTypeAny } from 'zod';
import { errorCatalog, type ErrorCode } from '../../errors/catalog.ts';
import { apiErrorCodes } from '../../errors/error-schemas.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import { renderAnthropicError, renderOpenAIError } from '../../errors/render-error.ts';
import { EXAMPLE_REQUEST_ID } from './openapi-chat-examples.ts';
import { componentSchemas, jsonSchemaOf, ref } from './openapi-components.ts';
import { errorCodesOfOperation, operations, type OperationSpec } from './openapi-operations.ts';

const header = (description: string) => ({ description, schema: { type: 'string' } });

/** Statuses a route's codes answer with; a body too large is invalid_request with 413. */
function statusesOf(operation: OperationSpec): Map<number, ErrorCode[]> {
  const byStatus = new Map<number, ErrorCode[]>();
  const add = (status: number, code: ErrorCode) => byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  const codes = errorCodesOfOperation(operation);
  for (const code of codes) add(errorCatalog[code].status, code);
  if (operation.body && codes.includes('invalid_request')) add(413, 'invalid_request');
  return new Map([...byStatus].sort(([a], [b]) => a - b));
}

function errorResponse(operation: OperationSpec, status: number, codes: ErrorCode[]) {
  const envelope =
    operation.wire === 'openai'
      ? ref('Error')
      : operation.wire === 'anthropic'
        ? ref('AnthropicError')
        : { oneOf: [ref('Error'), ref('AnthropicError')] };
  // The envelope, with the codes this status carries on this route (both shapes keep the code at error.code).
  const codesOfStatus = { type: 'object', properties: { error: { type: 'object', properties: { code: { enum: codes } } } } };
  const schema = { allOf: [envelope, codesOfStatus] };
  const error = new GatewayError(codes[0]!, `An example ${codes[0]} error; the message is for people and may change.`, {}, null, status);
  const example = operation.wire === 'anthropic' ? renderAnthropicError(error, EXAMPLE_REQUEST_ID) : renderOpenAIError(error, EXAMPLE_REQUEST_ID);
  const headers: Record<string, unknown> = { 'x-svc-request-id': header('The request id, as in the body') };
  if (status === 429) headers['retry-after'] = header('Seconds to wait; waiting that long succeeds');
  if (operation.wire !== 'openai') headers['x-should-retry'] = header('Anthropic-shaped errors: "true" or "false", whether to retry');
  const shape =
    operation.wire === 'either'
      ? ' (Anthropic-shaped when the request has an anthropic-version header)'
      : operation.wire === 'anthropic'
        ? ' (Anthropic-shaped)'
        : '';
  return {
    description: `${codes.join(', ')}${shape}`,
    headers,
    content: { 'application/json': { schema, example } },
  };
}

function successResponse(operation: OperationSpec) {
  if (operation.path === '/v1/openapi.json')
    return { description: 'This OpenAPI 3.1 document', content: { 'application/json': { schema: { type: 'object' } } } };
  const { answer } = operation;
  const headers: Record<string, unknown> = { 'x-svc-request-id': header('The request id') };
  if (operation.billable) headers['x-svc-receipt-id'] = header('The receipt of this request: GET /v1/receipts/{id}');
  if (operation.path.startsWith('/v1/fix/runs')) headers['x-svc-run-id'] = header('The run id');
  const content: Record<string, unknown> = {};
  const oneOrAny = (names: typeof answer.components) => (names.length === 1 ? ref(names[0]!) : { oneOf: names.map(ref) });
  if (answer.components.length > 0) {
    const schema = oneOrAny(answer.components);
    content['application/json'] = answer.example === undefined ? { schema } : { schema, example: answer.example };
  }
  const { events } = answer;
  // OpenAPI 3.1 has no schema for the events of a stream (3.2's itemSchema): each event's data is told in x-event-data.
  if (events) content['text/event-stream'] = { schema: { type: 'string', description: events.description }, 'x-event-data': oneOrAny(events.data) };
  return {
    description: events?.when === 'optional' ? `JSON; ${events.description}` : 'Success',
    headers,
    content,
  };
}

function parametersOf(operation: OperationSpec): unknown[] {
  const parameters: unknown[] = [];
  if (operation.pathId) parameters.push({ name: 'id', in: 'path', required: true, description: operation.pathId, schema: { type: 'string' } });
  for (const [name, field] of Object.entries(operation.query?.shape ?? {})) {
    const schema = jsonSchemaOf(field instanceof ZodOptional ? (field.unwrap() as ZodTypeAny) : field);
    parameters.push({ name, in: 'query', required: !field.isOptional(), description: field.description, schema });
  }
  if (operation.path === '/v1/fix/runs/{id}/events') {
    parameters.push({
      name: 'Last-Event-ID',
      in: 'header',
      required: false,
      description: 'Same as after, as EventSource sends it',
      schema: { type: 'string' },
    });
  }
  if (operation.wire !== 'openai') {
    parameters.push({
      name: 'anthropic-version',
      in: 'header',
      required: false,
      description:
        operation.path === '/v1/models'
          ? 'Selects the Anthropic shape of the list and of errors'
          : 'Anthropic clients send it; errors are then Anthropic-shaped',
      schema: { type: 'string' },
    });
  }
  return parameters;
}

function operationObject(operation: OperationSpec) {
  const responses: Record<string, unknown> = { '200': successResponse(operation) };
  for (const [status, codes] of statusesOf(operation)) responses[String(status)] = errorResponse(operation, status, codes);
  const scope = operation.scope ? ` Needs a key with scope \`${operation.scope}\`.` : '';
  return {
    operationId: operation.operationId,
    summary: operation.summary,
    description: `${operation.description ?? ''}${scope}`.trim() || undefined,
    tags: [operation.tag],
    ...(operation.public ? { security: [] } : {}),
    ...(operation.externalDocs ? { externalDocs: { description: 'The provider format', url: operation.externalDocs } } : {}),
    parameters: parametersOf(operation),
    ...(operation.body
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': { schema: ref(operation.body.component), ...(operation.body.example ? { example: operation.body.example } : {}) },
            },
          },
        }
      : {}),
    responses,
  };
}

/** The error catalog as a table, for people reading the document. */
function catalogTable(): string {
  const rows = apiErrorCodes.map((code) => {
    const spec = errorCatalog[code];
    return `| ${code} | ${spec.status} | ${spec.retryable ? 'yes' : 'no'} | ${spec.type} | ${spec.anthropicType} |`;
  });
  return ['| code | HTTP | retryable | OpenAI type | Anthropic type |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** The OpenAPI 3.1 document of every /v1 endpoint, generated from the schemas the code validates and renders with. */
export function buildOpenApiDocument(version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of operations) (paths[operation.path] ??= {})[operation.method] = operationObject(operation);
  return {
    openapi: '3.1.0',
    info: {
      title: 'model-gateway',
      version,
      description: [
        'OpenAI- and Anthropic-compatible model gateway: aliases with fallback, exact money in USD decimal strings, a receipt per request.',
        'Keys go in `Authorization: Bearer svc_...` or `x-api-key`. Every error is one envelope (Anthropic-shaped on /v1/messages) with a stable `code`:',
        '',
        catalogTable(),
        '',
        'A body too large is invalid_request with 413; bytes that are not HTTP/1.1 get invalid_request with 400, 408 or 431 before any route.',
      ].join('\n'),
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    servers: [{ url: '/', description: 'This gateway' }],
    security: [{ bearer: [] }, { apiKey: [] }],
    tags: [{ name: 'Inference' }, { name: 'Account' }, { name: 'Fix agents' }, { name: 'Meta' }],
    paths,
    components: {
      schemas: componentSchemas(),
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An API key svc_...' },
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The same key, as Anthropic clients send it' },
      },
    },
  };
}

export type OpenApiDocument = ReturnType<typeof buildOpenApiDocument>;
