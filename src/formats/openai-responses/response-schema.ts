import { apiErrorCodes, openAIErrorObjectSchema } from '../../errors/error-schemas.ts';
import * as s from '../../lib/wire-schema.ts';

/**
 * What POST /v1/responses answers (render-response.ts, responses-stream-encoder.ts), as the
 * OpenAPI document shows it; the document test holds every real answer to it. Request fields the
 * response repeats come back in their response form (responses-echo.ts).
 * https://platform.openai.com/docs/api-reference/responses/object
 */

const count = () => s.integer({ minimum: 0 });
const itemStatus = s.enumOf(['in_progress', 'completed']);
const namespace = { namespace: s.string({ description: 'The namespace tool the function belongs to' }) };

const outputText = s.object({
  type: s.literal('output_text'),
  annotations: s.array(s.anyObject()),
  logprobs: s.array(s.anyObject()),
  text: s.string(),
});
const summaryText = s.object({ type: s.literal('summary_text'), text: s.string() });

const outputItem = s.tagged('type', [
  s.object({ id: s.string(), type: s.literal('message'), status: itemStatus, content: s.array(outputText), role: s.literal('assistant') }),
  s.object({ id: s.string(), type: s.literal('reasoning'), summary: s.array(summaryText) }),
  s.object(
    { id: s.string(), type: s.literal('function_call'), status: itemStatus, arguments: s.string(), call_id: s.string(), name: s.string() },
    namespace,
  ),
  s.object(
    { id: s.string(), type: s.literal('custom_tool_call'), status: itemStatus, call_id: s.string(), name: s.string(), input: s.string() },
    namespace,
  ),
]);

export const responseSchema = s.object(
  {
    id: s.string({ description: 'resp_<the request id suffix>' }),
    object: s.literal('response'),
    created_at: s.integer(),
    status: s.enumOf(['in_progress', 'completed', 'incomplete', 'failed']),
    background: s.boolean(),
    error: s.nullable(openAIErrorObjectSchema(apiErrorCodes), { description: "response.failed: the contract's error fields" }),
    incomplete_details: s.nullable(s.object({ reason: s.enumOf(['max_output_tokens', 'content_filter']) })),
    instructions: s.nullable(s.string()),
    max_output_tokens: s.nullable(s.integer()),
    model: s.string({ description: 'The model that answered' }),
    output: s.array(outputItem),
    parallel_tool_calls: s.boolean(),
    previous_response_id: s.nullOnly(),
    reasoning: s.object({ effort: s.nullable(s.string()), summary: s.nullable(s.string()) }),
    store: s.boolean({ description: 'Always false: nothing is stored' }),
    temperature: s.nullable(s.number()),
    text: s.anyObject({ description: "The request's text, or {format: {type: 'text'}}" }),
    tool_choice: s.union([s.string(), s.anyObject()], { description: "The request's tool_choice, or auto" }),
    tools: s.array(s.anyValue(), { description: "The request's tools, as sent" }),
    top_p: s.nullable(s.number()),
    truncation: s.enumOf(['auto', 'disabled']),
    usage: s.nullable(
      s.object({
        input_tokens: count(),
        input_tokens_details: s.object({ cached_tokens: count() }),
        output_tokens: count(),
        output_tokens_details: s.object({ reasoning_tokens: count() }),
        total_tokens: count(),
      }),
    ),
    metadata: s.anyObject({ description: "The request's metadata, or {}" }),
  },
  { user: s.string(), prompt_cache_key: s.string() },
);

const at = { item_id: s.string(), output_index: count() };

const event = <T extends string>(type: T, fields: Record<string, s.Schema>) =>
  s.object({ type: s.literal(type), sequence_number: count(), ...fields });

/** The data of one event (its `event:` is the same type); each has a sequence_number counted from 0. */
export const responseStreamEventSchema = s.tagged('type', [
  s.object({
    type: s.enumOf(['response.created', 'response.in_progress', 'response.completed', 'response.failed']),
    sequence_number: count(),
    response: responseSchema,
  }),
  s.object({
    type: s.enumOf(['response.output_item.added', 'response.output_item.done']),
    sequence_number: count(),
    output_index: count(),
    item: outputItem,
  }),
  s.object({
    type: s.enumOf(['response.content_part.added', 'response.content_part.done']),
    sequence_number: count(),
    ...at,
    content_index: count(),
    part: outputText,
  }),
  event('response.output_text.delta', { ...at, content_index: count(), delta: s.string(), logprobs: s.array(s.anyObject()) }),
  event('response.output_text.done', { ...at, content_index: count(), text: s.string(), logprobs: s.array(s.anyObject()) }),
  s.object({
    type: s.enumOf(['response.reasoning_summary_part.added', 'response.reasoning_summary_part.done']),
    sequence_number: count(),
    ...at,
    summary_index: count(),
    part: summaryText,
  }),
  event('response.reasoning_summary_text.delta', { ...at, summary_index: count(), delta: s.string() }),
  event('response.reasoning_summary_text.done', { ...at, summary_index: count(), text: s.string() }),
  event('response.function_call_arguments.delta', { ...at, delta: s.string() }),
  event('response.function_call_arguments.done', { ...at, name: s.string(), arguments: s.string() }),
  event('response.custom_tool_call_input.delta', { ...at, delta: s.string() }),
  event('response.custom_tool_call_input.done', { ...at, input: s.string() }),
]);
