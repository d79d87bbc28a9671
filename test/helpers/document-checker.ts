import assert from 'node:assert/strict';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { readEvents } from './fix-fixtures.ts';

export interface OpenApiDocument {
  openapi: string;
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content: Record<string, { schema: unknown; example?: unknown; 'x-event-data'?: unknown }> }> }>
  >;
  components: { schemas: Record<string, unknown> };
}

const DOCUMENT_ID = 'https://gateway.test/openapi.json';

export const pointer = (...parts: string[]) => parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

type Node = Record<string, unknown>;

const ONE = ['items', 'then', 'else', 'additionalProperties', 'contains', 'propertyNames'];
const MANY = ['anyOf', 'oneOf', 'prefixItems'];

/**
 * Every object schema that lists its properties refuses the others (`unevaluatedProperties`, which
 * sees through oneOf and anyOf), even where the document leaves objects open: a field an answer
 * has that the document lacks fails the check. Not inside `allOf` members, `if` and `not`: those
 * constrain a value another schema describes (the codes of one status), they do not list it.
 */
function closeObjects(node: unknown): void {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return;
  const schema = node as Node;
  if (schema.properties !== undefined) {
    delete schema.additionalProperties;
    schema.unevaluatedProperties = false;
  }
  for (const [keyword, value] of Object.entries(schema)) {
    if (ONE.includes(keyword)) closeObjects(value);
    else if (MANY.includes(keyword)) (value as unknown[]).forEach(closeObjects);
    else if (keyword === 'properties' || keyword === '$defs') Object.values(value as Node).forEach(closeObjects);
  }
}

/** The document with every object closed: components, and the inline schemas of answers. */
export function closedDocument(document: OpenApiDocument): OpenApiDocument {
  const copy = structuredClone(document);
  Object.values(copy.components.schemas).forEach(closeObjects);
  for (const methods of Object.values(copy.paths))
    for (const operation of Object.values(methods))
      for (const response of Object.values(operation.responses))
        for (const content of Object.values(response.content ?? {})) {
          closeObjects(content.schema);
          closeObjects(content['x-event-data']);
        }
  return copy;
}

/** Checks answers against the document with a JSON Schema 2020-12 validator: documented status, content type, body and events. */
export class DocumentChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();
  readonly checked = new Set<string>();

  constructor(readonly document: OpenApiDocument) {
    this.ajv.addSchema({ ...closedDocument(document), $id: DOCUMENT_ID });
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

  /**
   * The response of `method template` matches what the document says of its status; returns the
   * JSON body, or the events, each event's data checked against the operation's x-event-data.
   */
  async check(method: 'get' | 'post', template: string, response: Response): Promise<unknown> {
    const operation = this.document.paths[template]?.[method];
    assert.ok(operation, `${method} ${template} is not in the document`);
    const status = String(response.status);
    const documented = operation.responses[status];
    assert.ok(documented, `${method} ${template} answered ${status}, which the document does not list`);
    const type = (response.headers.get('content-type') ?? '').split(';')[0]!;
    assert.ok(documented.content[type], `${method} ${template} ${status}: ${type} is not documented`);
    this.checked.add(`${method} ${template} ${status} ${type}`);
    const at = pointer('paths', template, method, 'responses', status, 'content', type);
    if (type !== 'text/event-stream') {
      const body = await response.json();
      this.assertValid(`${at}/schema`, body, `${method} ${template} ${status}`);
      return body;
    }
    assert.ok(documented.content[type]!['x-event-data'], `${method} ${template}: the data of its events is not documented`);
    const events = await readEvents(response);
    for (const event of events) {
      if (event.data === '[DONE]') continue;
      const data = JSON.parse(event.data) as { type?: unknown };
      this.assertValid(`${at}/x-event-data`, data, `${method} ${template}: the ${event.event ?? 'data'} event`);
      if (event.event !== undefined && typeof data.type === 'string') assert.equal(event.event, data.type);
    }
    return events;
  }
}
