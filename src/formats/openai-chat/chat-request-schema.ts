import { routingSchema } from '../parse-routing.ts';
import * as s from '../../lib/wire-schema.ts';

/**
 * POST /v1/chat/completions, as far as the gateway reads it: the one schema its parser checks
 * bodies with and the OpenAPI document shows. Other fields reach OpenAI-format providers unchanged.
 * https://platform.openai.com/docs/api-reference/chat/create
 */

export const OPENAI_CHAT_DOCS = 'https://platform.openai.com/docs/api-reference/chat/create';

/** Shared by the three chat formats. */
export const modelField = s.string({ notEmpty: true, description: 'An alias (GET /v1/models) or a model id', message: 'is required' });
export const streamField = s.nullable(s.boolean({ description: 'Server-sent events in the format of the route' }));
export const messagesField = <S extends s.Schema>(message: S, description: string) =>
  s.array(message, { minItems: 1, description, message: 'is required and must be a non-empty array' });
export const positiveInteger = (description?: string) => s.nullable(s.integer({ minimum: 1, description }));

const textPart = s.object({ type: s.literal('text'), text: s.string() }, {}, { message: 'must be a text part' });

/** System, developer, assistant and tool content: text, or text parts joined. */
const textContent = s.union([s.string(), s.array(textPart)], { message: 'must be a string or an array of text parts' });

const imageUrlPart = s.object({
  type: s.literal('image_url'),
  image_url: s.object({ url: s.string({ notEmpty: true }) }, { detail: s.nullable(s.enumOf(['auto', 'low', 'high'])) }),
});

const userContent = s.union([s.string(), s.array(s.tagged('type', [textPart, imageUrlPart]))], {
  message: 'must be a string or an array of content parts',
});

const toolCall = s.object(
  { id: s.string(), function: s.object({ name: s.string() }, { arguments: s.nullable(s.string()) }) },
  { type: s.literal('function') },
  { missing: 'must have id and function.name' },
);

const message = s.tagged('role', [
  s.object({ role: s.enumOf(['system', 'developer']), content: textContent }),
  s.object({ role: s.literal('user'), content: userContent }),
  s.object(
    { role: s.literal('assistant') },
    { content: s.nullable(textContent), tool_calls: s.nullable(s.array(toolCall)) },
    { description: 'Needs content or tool_calls' },
  ),
  s.object({ role: s.literal('tool'), tool_call_id: s.string(), content: textContent }),
]);

const tool = s.object({
  type: s.literal('function'),
  function: s.object(
    { name: s.string() },
    {
      description: s.nullable(s.string()),
      parameters: s.nullable(s.anyObject({ description: 'JSON Schema of the arguments' })),
      strict: s.nullable(s.boolean()),
    },
  ),
});

const toolChoice = s.union(
  [s.enumOf(['auto', 'none', 'required']), s.object({ function: s.object({ name: s.string() }) }, { type: s.literal('function') })],
  {
    message: 'must be auto, none, required or {type: "function", function: {name}}',
  },
);

/** `response_format`; `text` is the default and asks for nothing. */
export const responseFormatSchema = s.tagged('type', [
  s.object({ type: s.literal('text') }),
  s.object({ type: s.literal('json_object') }),
  s.object({
    type: s.literal('json_schema'),
    json_schema: s.object({ name: s.string(), schema: s.anyObject() }, { description: s.nullable(s.string()), strict: s.nullable(s.boolean()) }),
  }),
]);

export const chatCompletionRequestSchema = s.object(
  {
    model: modelField,
    messages: messagesField(message, 'OpenAI chat messages: text and image_url parts, tool calls and tool results'),
  },
  {
    stream: streamField,
    stream_options: s.nullable(s.object({}, { include_usage: s.nullable(s.boolean()) })),
    max_tokens: positiveInteger(),
    max_completion_tokens: positiveInteger('Wins over max_tokens'),
    tools: s.nullable(s.array(tool)),
    tool_choice: s.nullable(toolChoice),
    parallel_tool_calls: s.nullable(s.boolean()),
    temperature: s.nullable(s.number()),
    top_p: s.nullable(s.number()),
    stop: s.nullable(s.union([s.string(), s.array(s.string())])),
    reasoning_effort: s.nullable(s.enumOf(['low', 'medium', 'high', 'xhigh'], { description: 'high is read as xhigh' })),
    response_format: s.nullable(responseFormatSchema),
    routing: routingSchema,
  },
  { description: 'An OpenAI chat-completions body; other fields reach OpenAI-format providers unchanged', message: 'must be a JSON object' },
);

export type ChatCompletionRequestBody = s.Infer<typeof chatCompletionRequestSchema>;
export type ChatMessageBody = ChatCompletionRequestBody['messages'][number];
