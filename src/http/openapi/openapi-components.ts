import { z, type ZodTypeAny } from 'zod';
import { zodToJsonSchema } from 'zod-to-json-schema';
import { anthropicErrorSchema, apiErrorCodes, openAIErrorSchema } from '../../errors/error-schemas.ts';
import { fixQuoteRequestSchema } from '../../fix/fix-input.ts';
import { fixAgentListSchema, fixQuoteSchema, fixRunEventSchema, fixRunRequestSchema, fixRunSchema, fixStepSchema } from '../../fix/fix-schemas.ts';
import { messageSchema, countTokensSchema, messageStreamEventSchema } from '../../formats/anthropic-messages/message-schema.ts';
import { messagesRequestSchema } from '../../formats/anthropic-messages/messages-request-schema.ts';
import { chatCompletionChunkSchema, chatCompletionSchema } from '../../formats/openai-chat/chat-completion-schema.ts';
import { chatCompletionRequestSchema } from '../../formats/openai-chat/chat-request-schema.ts';
import { responseSchema, responseStreamEventSchema } from '../../formats/openai-responses/response-schema.ts';
import { responsesRequestSchema } from '../../formats/openai-responses/responses-request-schema.ts';
import { routingSchema } from '../../formats/parse-routing.ts';
import type { Schema } from '../../lib/wire-schema.ts';
import { balanceSchema } from '../account-schema.ts';
import { anthropicModelListSchema, modelListSchema } from '../model-list-schema.ts';
import { receiptListSchema, receiptSchema } from '../receipt-schema.ts';

type JsonSchema = Record<string, unknown>;

/**
 * Every named schema of the document: the very schemas the code validates bodies with (the wire
 * formats' JSON Schemas, compiled by ajv) and types its answers by (zod, for the gateway's own
 * bodies). The wire schemas are JSON Schema already; zod's are converted.
 */
const wire = {
  Error: openAIErrorSchema(apiErrorCodes),
  AnthropicError: anthropicErrorSchema(apiErrorCodes),
  Routing: routingSchema,
  ChatCompletionRequest: chatCompletionRequestSchema,
  ChatCompletion: chatCompletionSchema,
  ChatCompletionChunk: chatCompletionChunkSchema,
  MessagesRequest: messagesRequestSchema,
  Message: messageSchema,
  MessageStreamEvent: messageStreamEventSchema,
  CountTokens: countTokensSchema,
  ResponsesRequest: responsesRequestSchema,
  Response: responseSchema,
  ResponseStreamEvent: responseStreamEventSchema,
} satisfies Record<string, Schema>;

const zodComponents = {
  ModelList: modelListSchema,
  AnthropicModelList: anthropicModelListSchema,
  Receipt: receiptSchema,
  ReceiptList: receiptListSchema,
  Balance: balanceSchema,
  FixAgentList: fixAgentListSchema,
  FixQuoteRequest: fixQuoteRequestSchema,
  FixQuote: fixQuoteSchema,
  FixRunRequest: fixRunRequestSchema,
  FixStep: fixStepSchema,
  FixRun: fixRunSchema,
  FixRunEvent: fixRunEventSchema,
} satisfies Record<string, ZodTypeAny>;

export type ComponentName = keyof typeof wire | keyof typeof zodComponents;

export const ref = (name: ComponentName) => ({ $ref: `#/components/schemas/${name}` });

/** JSON Schema 2019-09 output is valid 2020-12 (OpenAPI 3.1's dialect) for what these schemas use: no tuples. */
export function jsonSchemaOf(schema: ZodTypeAny): JsonSchema {
  const { $schema: _dialect, ...rest } = zodToJsonSchema(schema, { target: 'jsonSchema2019-09', $refStrategy: 'none' }) as JsonSchema;
  return rest;
}

/** The schema a JSON pointer names inside the components. */
function resolvePointer(schemas: Record<string, JsonSchema>, pointer: string): unknown {
  const parts = pointer.split('/').map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  return parts.reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], schemas);
}

/**
 * The converter points a schema used twice at its first place, inside another component; a client
 * generator reads better with references to named components only, so those places are inlined.
 */
function inlineInnerReferences(node: unknown, schemas: Record<string, JsonSchema>): unknown {
  if (Array.isArray(node)) return node.map((entry) => inlineInnerReferences(entry, schemas));
  if (typeof node !== 'object' || node === null) return node;
  const { $ref: reference, ...rest } = node as JsonSchema;
  const inner = typeof reference === 'string' ? /^#\/components\/schemas\/(.+\/.+)$/.exec(reference) : null;
  const target = inner ? { ...(resolvePointer(schemas, inner[1]!) as JsonSchema), ...rest } : (node as JsonSchema);
  return Object.fromEntries(Object.entries(target).map(([key, value]) => [key, inlineInnerReferences(value, schemas)]));
}

function zodSchemas(): Record<string, JsonSchema> {
  const converted = zodToJsonSchema(z.object({}), {
    target: 'jsonSchema2019-09',
    definitions: zodComponents,
    basePath: ['#', 'components'],
    definitionPath: 'schemas',
  }) as { schemas: Record<string, JsonSchema> };
  return inlineInnerReferences(converted.schemas, converted.schemas) as Record<string, JsonSchema>;
}

/** A wire schema as the document shows it: a component it holds (the Routing of a request) becomes a reference. */
function wireSchema(node: unknown, names: Map<unknown, string>, top = false): unknown {
  if (!top && names.has(node)) return { $ref: `#/components/schemas/${names.get(node)}` };
  if (Array.isArray(node)) return node.map((entry) => wireSchema(entry, names));
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, wireSchema(value, names)]));
}

/** `components.schemas` of the document. */
export function componentSchemas(): Record<string, JsonSchema> {
  const names = new Map<unknown, string>(Object.entries(wire).map(([name, schema]) => [schema, name]));
  const converted = Object.fromEntries(Object.entries(wire).map(([name, schema]) => [name, wireSchema(schema, names, true) as JsonSchema]));
  return { ...converted, ...zodSchemas() };
}
