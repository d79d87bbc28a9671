import { routingSchema } from '../parse-routing.ts';
import {
  anyObject,
  array,
  boolean,
  enumOf,
  integer,
  literal,
  nullable,
  number,
  object,
  string,
  tagged,
  union,
  type Infer,
} from '../../lib/wire-schema.ts';

/**
 * POST /v1/chat/completions, as far as the gateway reads it: the one schema its parser checks
 * bodies with and the OpenAPI document shows. Other fields reach OpenAI-format providers unchanged.
 * https://platform.openai.com/docs/api-reference/chat/create
 */

export const OPENAI_CHAT_DOCS = 'https://platform.openai.com/docs/api-reference/chat/create';

/** Shared by the three chat formats. */
export const modelField = string({ minLength: 1, description: 'An alias (GET /v1/models) or a model id', message: 'is required' });
export const streamField = nullable(boolean({ description: 'Server-sent events in the format of the route' }));
export const positiveInteger = (description?: string) => nullable(integer({ minimum: 1, description }));

const textPart = object({ type: literal('text'), text: string() }, {}, { message: 'must be a text part' });

/** System, developer, assistant and tool content: text, or text parts joined. */
const textContent = union([string(), array(textPart)], { message: 'must be a string or an array of text parts' });

const imageUrlPart = object({
  type: literal('image_url'),
  image_url: object({ url: string({ notEmpty: true }) }, { detail: nullable(enumOf(['auto', 'low', 'high'])) }),
});

const userContent = union([string(), array(tagged('type', [textPart, imageUrlPart]))], {
  message: 'must be a string or an array of content parts',
});

const toolCall = object(
  { id: string(), function: object({ name: string() }, { arguments: nullable(string()) }) },
  { type: literal('function') },
  { missing: 'must have id and function.name' },
);

const message = tagged('role', [
  object({ role: enumOf(['system', 'developer']), content: textContent }),
  object({ role: literal('user'), content: userContent }),
  object(
    { role: literal('assistant') },
    { content: nullable(textContent), tool_calls: nullable(array(toolCall)) },
    { description: 'Needs content or tool_calls' },
  ),
  object({ role: literal('tool'), tool_call_id: string(), content: textContent }),
]);

const tool = object({
  type: literal('function'),
  function: object(
    { name: string() },
    {
      description: nullable(string()),
      parameters: nullable(anyObject({ description: 'JSON Schema of the arguments' })),
      strict: nullable(boolean()),
    },
  ),
});

const toolChoice = union([enumOf(['auto', 'none', 'required']), object({ function: object({ name: string() }) }, { type: literal('function') })], {
  message: 'must be auto, none, required or {type: "function", function: {name}}',
});

/** `response_format`; `text` is the default and asks for nothing. */
export const responseFormatSchema = tagged('type', [
  object({ type: literal('text') }),
  object({ type: literal('json_object') }),
  object({
    type: literal('json_schema'),
    json_schema: object({ name: string(), schema: anyObject() }, { description: nullable(string()), strict: nullable(boolean()) }),
  }),
]);

export const chatCompletionRequestSchema = object(
  {
    model: modelField,
    messages: array(message, {
      minItems: 1,
      description: 'OpenAI chat messages: text and image_url parts, tool calls and tool results',
      message: 'is required and must be a non-empty array',
    }),
  },
  {
    stream: streamField,
    stream_options: nullable(object({}, { include_usage: nullable(boolean()) })),
    max_tokens: positiveInteger(),
    max_completion_tokens: positiveInteger('Wins over max_tokens'),
    tools: nullable(array(tool)),
    tool_choice: nullable(toolChoice),
    parallel_tool_calls: nullable(boolean()),
    temperature: nullable(number()),
    top_p: nullable(number()),
    stop: nullable(union([string(), array(string())])),
    reasoning_effort: nullable(enumOf(['low', 'medium', 'high', 'xhigh'], { description: 'high is read as xhigh' })),
    response_format: nullable(responseFormatSchema),
    routing: routingSchema,
  },
  { description: 'An OpenAI chat-completions body; other fields reach OpenAI-format providers unchanged', message: 'must be a JSON object' },
);

export type ChatCompletionRequestBody = Infer<typeof chatCompletionRequestSchema>;
export type ChatMessageBody = ChatCompletionRequestBody['messages'][number];
