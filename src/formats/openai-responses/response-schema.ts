import { apiErrorCodes, openAIErrorObjectSchema } from '../../errors/error-schemas.ts';
import {
  anyObject,
  anyValue,
  array,
  boolean,
  enumOf,
  integer,
  literal,
  nullable,
  nullOnly,
  number,
  object,
  string,
  tagged,
  union,
  type Schema,
} from '../../lib/wire-schema.ts';

/**
 * What POST /v1/responses answers (render-response.ts, responses-stream-encoder.ts), as the
 * OpenAPI document shows it; the document test holds every real answer to it. Request fields the
 * response repeats come back in their response form (responses-echo.ts).
 * https://platform.openai.com/docs/api-reference/responses/object
 */

const count = () => integer({ minimum: 0 });
const itemStatus = enumOf(['in_progress', 'completed']);
const namespace = { namespace: string({ description: 'The namespace tool the function belongs to' }) };

const outputText = object({ type: literal('output_text'), annotations: array(anyObject()), logprobs: array(anyObject()), text: string() });
const summaryText = object({ type: literal('summary_text'), text: string() });

const outputItem = tagged('type', [
  object({ id: string(), type: literal('message'), status: itemStatus, content: array(outputText), role: literal('assistant') }),
  object({ id: string(), type: literal('reasoning'), summary: array(summaryText) }),
  object({ id: string(), type: literal('function_call'), status: itemStatus, arguments: string(), call_id: string(), name: string() }, namespace),
  object({ id: string(), type: literal('custom_tool_call'), status: itemStatus, call_id: string(), name: string(), input: string() }, namespace),
]);

export const responseSchema = object(
  {
    id: string({ description: 'resp_<the request id suffix>' }),
    object: literal('response'),
    created_at: integer(),
    status: enumOf(['in_progress', 'completed', 'incomplete', 'failed']),
    background: boolean(),
    error: nullable(openAIErrorObjectSchema(apiErrorCodes), { description: "response.failed: the contract's error fields" }),
    incomplete_details: nullable(object({ reason: enumOf(['max_output_tokens', 'content_filter']) })),
    instructions: nullable(string()),
    max_output_tokens: nullable(integer()),
    model: string({ description: 'The model that answered' }),
    output: array(outputItem),
    parallel_tool_calls: boolean(),
    previous_response_id: nullOnly(),
    reasoning: object({ effort: nullable(string()), summary: nullable(string()) }),
    store: boolean({ description: 'Always false: nothing is stored' }),
    temperature: nullable(number()),
    text: anyObject({ description: "The request's text, or {format: {type: 'text'}}" }),
    tool_choice: union([string(), anyObject()], { description: "The request's tool_choice, or auto" }),
    tools: array(anyValue(), { description: "The request's tools, as sent" }),
    top_p: nullable(number()),
    truncation: enumOf(['auto', 'disabled']),
    usage: nullable(
      object({
        input_tokens: count(),
        input_tokens_details: object({ cached_tokens: count() }),
        output_tokens: count(),
        output_tokens_details: object({ reasoning_tokens: count() }),
        total_tokens: count(),
      }),
    ),
    metadata: anyObject({ description: "The request's metadata, or {}" }),
  },
  { user: string(), prompt_cache_key: string() },
);

const at = { item_id: string(), output_index: count() };

const event = <T extends string>(type: T, fields: Record<string, Schema>) => object({ type: literal(type), sequence_number: count(), ...fields });

/** The data of one event (its `event:` is the same type); each has a sequence_number counted from 0. */
export const responseStreamEventSchema = tagged('type', [
  object({
    type: enumOf(['response.created', 'response.in_progress', 'response.completed', 'response.failed']),
    sequence_number: count(),
    response: responseSchema,
  }),
  object({
    type: enumOf(['response.output_item.added', 'response.output_item.done']),
    sequence_number: count(),
    output_index: count(),
    item: outputItem,
  }),
  object({
    type: enumOf(['response.content_part.added', 'response.content_part.done']),
    sequence_number: count(),
    ...at,
    content_index: count(),
    part: outputText,
  }),
  event('response.output_text.delta', { ...at, content_index: count(), delta: string(), logprobs: array(anyObject()) }),
  event('response.output_text.done', { ...at, content_index: count(), text: string(), logprobs: array(anyObject()) }),
  object({
    type: enumOf(['response.reasoning_summary_part.added', 'response.reasoning_summary_part.done']),
    sequence_number: count(),
    ...at,
    summary_index: count(),
    part: summaryText,
  }),
  event('response.reasoning_summary_text.delta', { ...at, summary_index: count(), delta: string() }),
  event('response.reasoning_summary_text.done', { ...at, summary_index: count(), text: string() }),
  event('response.function_call_arguments.delta', { ...at, delta: string() }),
  event('response.function_call_arguments.done', { ...at, name: string(), arguments: string() }),
  event('response.custom_tool_call_input.delta', { ...at, delta: string() }),
  event('response.custom_tool_call_input.done', { ...at, input: string() }),
]);
