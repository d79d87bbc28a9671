import { modelField, positiveInteger, streamField } from '../openai-chat/chat-request-schema.ts';
import { routingSchema } from '../parse-routing.ts';
import {
  anyObject,
  anythingBut,
  array,
  boolean,
  enumOf,
  literal,
  nullable,
  nullOnly,
  number,
  object,
  refused,
  string,
  tagged,
  taggedOpen,
  union,
  type Infer,
} from '../../lib/wire-schema.ts';

/**
 * POST /v1/responses, as far as the gateway reads it: the one schema its parser checks bodies
 * with and the OpenAPI document shows. Stateless: what needs a stored object is refused, saying
 * what to send instead. https://platform.openai.com/docs/api-reference/responses/create
 */

export const OPENAI_RESPONSES_DOCS = 'https://platform.openai.com/docs/api-reference/responses/create';

const required = (message = 'is required') => string({ minLength: 1, message });

/** The part types whose `text` a model reads as text. */
export const TEXT_PART_TYPES = ['input_text', 'output_text', 'text', 'summary_text', 'reasoning_text'] as const;

const textPart = object({ type: enumOf(TEXT_PART_TYPES), text: string() });

const userPart = tagged('type', [
  textPart,
  object(
    {
      type: literal('input_image'),
      image_url: string({ notEmpty: true, message: 'is required: the gateway keeps no files, so file_id cannot be resolved' }),
    },
    { detail: nullable(enumOf(['auto', 'low', 'high'])) },
  ),
]);

/** System, developer and assistant messages: their text parts (and refusals) joined. */
const messageText = union([string(), array(tagged('type', [textPart, object({ type: literal('refusal'), refusal: string() })]))], {
  message: 'must be a string or an array of content parts',
});

const messageType = { type: literal('message') };

/** Easy input messages may leave out `type`. */
const messageItem = tagged(
  'role',
  [
    object({ role: enumOf(['system', 'developer', 'assistant']), content: messageText }, messageType),
    object(
      { role: literal('user'), content: union([string(), array(userPart)], { message: 'must be a string or an array of content parts' }) },
      messageType,
    ),
  ],
  { fields: messageType },
);

const namespace = { namespace: nullable(string({ description: 'The namespace tool the function belongs to' })) };

/** A tool output: a string, content parts, or the `{content, success}` older Codex versions send for a failed call. */
const toolOutput = union([string(), object({ content: string() }, { success: nullable(boolean()) }), array(userPart)], {
  message: 'must be a string or an array of content parts',
});

/**
 * Items a model reads are translated; items only the provider that made them can read are
 * dropped (`reasoning` with encrypted content, `compaction`, hosted-tool calls), as are types
 * newer than the gateway; references to stored items are refused.
 */
const inputItem = taggedOpen(
  'type',
  [
    messageItem,
    object({ type: literal('function_call'), call_id: required(), name: required() }, { arguments: nullable(string()), ...namespace }),
    object({ type: literal('custom_tool_call'), call_id: required(), name: required(), input: string() }, namespace),
    object({ type: enumOf(['function_call_output', 'custom_tool_call_output']), call_id: required(), output: toolOutput }),
    refused(object({ type: literal('item_reference') }), {
      message: ': item_reference needs stored items; the gateway is stateless, send the item itself',
    }),
  ],
  { untagged: messageItem },
);

const functionTool = object(
  { type: literal('function'), name: required() },
  { description: nullable(string()), parameters: nullable(anyObject({ description: 'JSON Schema of the arguments' })), strict: nullable(boolean()) },
);

/** Free-form input (Codex's apply_patch): a function with one string argument `input`; a grammar goes into its description. */
const customTool = object(
  { type: literal('custom'), name: required() },
  {
    description: nullable(string()),
    format: nullable(taggedOpen('type', [object({ type: literal('grammar'), definition: string() }, { syntax: nullable(string()) })])),
  },
);

/**
 * Translated: function, custom, and namespace (its tools flattened to `<namespace>__<name>`).
 * Hosted tools the provider would run itself (web_search, file_search, mcp, local_shell...) are
 * left out: no chat-completions model can honour them.
 */
const tool = taggedOpen('type', [
  functionTool,
  customTool,
  object(
    { type: literal('namespace'), name: required(), tools: array(taggedOpen('type', [functionTool, customTool])) },
    { description: nullable(string()) },
  ),
]);

/** A choice of a hosted tool (left out) becomes auto; `allowed_tools` keeps its mode. */
const toolChoice = union(
  [
    enumOf(['auto', 'none', 'required']),
    taggedOpen('type', [
      object({ type: enumOf(['function', 'custom']), name: required() }, namespace),
      object({ type: literal('allowed_tools') }, { mode: nullable(enumOf(['auto', 'required'])) }),
    ]),
  ],
  { message: 'must be auto, none, required or an object with a type' },
);

/** `text.format` is the Responses API's response_format: the same fields, one level up. */
export const textFormatSchema = tagged('type', [
  object({ type: literal('text') }),
  object({ type: literal('json_object') }),
  object(
    { type: literal('json_schema'), name: string(), schema: anyObject() },
    { description: nullable(string()), strict: nullable(boolean()) },
    { missing: 'needs name and schema for json_schema' },
  ),
]);

const reasoning = object(
  {},
  {
    effort: nullable(enumOf(['none', 'minimal', 'low', 'medium', 'high', 'xhigh'])),
    summary: nullable(string({ description: 'Asks for reasoning summaries' })),
    generate_summary: nullable(string({ description: 'The deprecated name of summary' })),
  },
  { message: 'must be an object' },
);

const stateless = 'the gateway is stateless:';

export const responsesRequestSchema = object(
  {
    model: modelField,
    input: union([string(), array(inputItem, { minItems: 1 })], { message: 'is required: a string or a non-empty array of items' }),
  },
  {
    instructions: nullable(string({ description: 'The system prompt, before input' })),
    stream: streamField,
    max_output_tokens: positiveInteger(),
    tools: nullable(array(tool)),
    tool_choice: nullable(toolChoice),
    parallel_tool_calls: nullable(boolean()),
    temperature: nullable(number()),
    top_p: nullable(number()),
    reasoning: nullable(reasoning),
    text: nullable(
      object({}, { format: nullable(textFormatSchema) }, { message: 'must be an object', description: 'text.format asks for structured output' }),
    ),
    store: nullable(boolean({ description: 'Accepted and ignored: nothing is stored, and the response says store: false' })),
    user: nullable(string()),
    safety_identifier: nullable(string()),
    prompt_cache_key: nullable(string()),
    metadata: nullable(anyObject({ description: 'Repeated in the response' })),
    truncation: nullable(enumOf(['auto', 'disabled'])),
    previous_response_id: nullOnly({
      message: `needs stored responses; ${stateless} send the whole conversation in input (with store: false)`,
      description: 'Refused: the gateway is stateless',
    }),
    conversation: nullOnly({ message: `needs stored conversations; ${stateless} send the whole conversation in input`, description: 'Refused' }),
    prompt: nullOnly({ message: `templates are stored objects; ${stateless} send instructions and input instead`, description: 'Refused' }),
    background: anythingBut(true, { message: `responses are stored and polled; ${stateless} stream instead`, description: 'true is refused' }),
    routing: routingSchema,
  },
  {
    description:
      'An OpenAI Responses body. Stateless: previous_response_id, conversation, prompt and background are refused; other fields are ignored',
    message: 'must be a JSON object',
  },
);

export type ResponsesRequestBody = Infer<typeof responsesRequestSchema>;
export type InputItem = Exclude<ResponsesRequestBody['input'], string>[number];
export type UserPart = Infer<typeof userPart>;
export type ResponsesTool = NonNullable<ResponsesRequestBody['tools']>[number];
