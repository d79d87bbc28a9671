import { modelField, positiveInteger, streamField } from '../openai-chat/chat-request-schema.ts';
import { routingSchema } from '../parse-routing.ts';
import * as s from '../../lib/wire-schema.ts';

/**
 * POST /v1/responses, as far as the gateway reads it: the one schema its parser checks bodies
 * with and the OpenAPI document shows. Stateless: what needs a stored object is refused, saying
 * what to send instead. https://platform.openai.com/docs/api-reference/responses/create
 */

export const OPENAI_RESPONSES_DOCS = 'https://platform.openai.com/docs/api-reference/responses/create';

const required = (message = 'is required') => s.string({ notEmpty: true, message });

/** The part types whose `text` a model reads as text. */
export const TEXT_PART_TYPES = ['input_text', 'output_text', 'text', 'summary_text', 'reasoning_text'] as const;

const textPart = s.object({ type: s.enumOf(TEXT_PART_TYPES), text: s.string() });

const userPart = s.tagged('type', [
  textPart,
  s.object(
    {
      type: s.literal('input_image'),
      image_url: s.string({ notEmpty: true, message: 'is required: the gateway keeps no files, so file_id cannot be resolved' }),
    },
    { detail: s.nullable(s.enumOf(['auto', 'low', 'high'])) },
  ),
]);

/** System, developer and assistant messages: their text parts (and refusals) joined. */
const messageText = s.union([s.string(), s.array(s.tagged('type', [textPart, s.object({ type: s.literal('refusal'), refusal: s.string() })]))], {
  message: 'must be a string or an array of content parts',
});

const messageType = { type: s.literal('message') };

/** Easy input messages may leave out `type`. */
const messageItem = s.tagged(
  'role',
  [
    s.object({ role: s.enumOf(['system', 'developer', 'assistant']), content: messageText }, messageType),
    s.object(
      { role: s.literal('user'), content: s.union([s.string(), s.array(userPart)], { message: 'must be a string or an array of content parts' }) },
      messageType,
    ),
  ],
  { fields: messageType },
);

const namespace = { namespace: s.nullable(s.string({ description: 'The namespace tool the function belongs to' })) };

/** A tool output: a string, content parts, or the `{content, success}` older Codex versions send for a failed call. */
const toolOutput = s.union([s.string(), s.object({ content: s.string() }, { success: s.nullable(s.boolean()) }), s.array(userPart)], {
  message: 'must be a string or an array of content parts',
});

const functionTool = s.object(
  { type: s.literal('function'), name: required() },
  {
    description: s.nullable(s.string()),
    parameters: s.nullable(s.anyObject({ description: 'JSON Schema of the arguments' })),
    strict: s.nullable(s.boolean()),
  },
);

/** Free-form input (Codex's apply_patch): a function with one string argument `input`; a grammar goes into its description. */
const customTool = s.object(
  { type: s.literal('custom'), name: required() },
  {
    description: s.nullable(s.string()),
    format: s.nullable(s.taggedOpen('type', [s.object({ type: s.literal('grammar'), definition: s.string() }, { syntax: s.nullable(s.string()) })])),
  },
);

/**
 * Translated: function, custom, and namespace (its tools flattened to `<namespace>__<name>`).
 * Hosted tools the provider would run itself (web_search, file_search, mcp, local_shell...) are
 * left out: no chat-completions model can honour them.
 */
const tool = s.taggedOpen('type', [
  functionTool,
  customTool,
  s.object(
    { type: s.literal('namespace'), name: required(), tools: s.array(s.taggedOpen('type', [functionTool, customTool])) },
    { description: s.nullable(s.string()) },
  ),
]);

/**
 * Items a model reads are translated; items only the provider that made them can read are
 * dropped (`reasoning` with encrypted content, `compaction`, hosted-tool calls), as are types
 * newer than the gateway; references to stored items are refused.
 */
const inputItem = s.taggedOpen(
  'type',
  [
    messageItem,
    s.object({ type: s.literal('function_call'), call_id: required(), name: required() }, { arguments: s.nullable(s.string()), ...namespace }),
    s.object({ type: s.literal('custom_tool_call'), call_id: required(), name: required(), input: s.string() }, namespace),
    s.object({ type: s.enumOf(['function_call_output', 'custom_tool_call_output']), call_id: required(), output: toolOutput }),
    // Codex sends the tools of models its catalog knows in the input, as one item.
    s.object({ type: s.literal('additional_tools'), tools: s.array(tool) }),
    // Codex's remote compaction: the trigger asks for one, the compaction is one (response-compaction.ts).
    s.object({ type: s.literal('compaction_trigger') }),
    s.object({ type: s.literal('compaction'), encrypted_content: s.string() }),
    s.refused(s.object({ type: s.literal('item_reference') }), {
      message: ': item_reference needs stored items; the gateway is stateless, send the item itself',
    }),
  ],
  { untagged: messageItem },
);

/** A choice of a hosted tool (left out) becomes auto; `allowed_tools` keeps its mode. */
const toolChoice = s.union(
  [
    s.enumOf(['auto', 'none', 'required']),
    s.taggedOpen('type', [
      s.object({ type: s.enumOf(['function', 'custom']), name: required() }, namespace),
      s.object({ type: s.literal('allowed_tools') }, { mode: s.nullable(s.enumOf(['auto', 'required'])) }),
    ]),
  ],
  { message: 'must be auto, none, required or an object with a type' },
);

/** `text.format` is the Responses API's response_format: the same fields, one level up. */
export const textFormatSchema = s.tagged('type', [
  s.object({ type: s.literal('text') }),
  s.object({ type: s.literal('json_object') }),
  s.object(
    { type: s.literal('json_schema'), name: s.string(), schema: s.anyObject() },
    { description: s.nullable(s.string()), strict: s.nullable(s.boolean()) },
    { missing: 'needs name and schema for json_schema' },
  ),
]);

const reasoning = s.object(
  {},
  {
    effort: s.nullable(s.enumOf(['none', 'minimal', 'low', 'medium', 'high', 'xhigh'])),
    summary: s.nullable(s.string({ description: 'Asks for reasoning summaries' })),
    generate_summary: s.nullable(s.string({ description: 'The deprecated name of summary' })),
  },
  { message: 'must be an object' },
);

const stateless = 'the gateway is stateless:';

export const responsesRequestSchema = s.object(
  {
    model: modelField,
    input: s.union([s.string(), s.array(inputItem, { minItems: 1 })], { message: 'is required: a string or a non-empty array of items' }),
  },
  {
    instructions: s.nullable(s.string({ description: 'The system prompt, before input' })),
    stream: streamField,
    max_output_tokens: positiveInteger(),
    tools: s.nullable(s.array(tool)),
    tool_choice: s.nullable(toolChoice),
    parallel_tool_calls: s.nullable(s.boolean()),
    temperature: s.nullable(s.number()),
    top_p: s.nullable(s.number()),
    reasoning: s.nullable(reasoning),
    text: s.nullable(
      s.object({}, { format: s.nullable(textFormatSchema) }, { message: 'must be an object', description: 'text.format asks for structured output' }),
    ),
    store: s.nullable(s.boolean({ description: 'Accepted and ignored: nothing is stored, and the response says store: false' })),
    user: s.nullable(s.string()),
    safety_identifier: s.nullable(s.string()),
    prompt_cache_key: s.nullable(s.string()),
    metadata: s.nullable(s.anyObject({ description: 'Repeated in the response' })),
    truncation: s.nullable(s.enumOf(['auto', 'disabled'])),
    previous_response_id: s.nullOnly({
      message: `needs stored responses; ${stateless} send the whole conversation in input (with store: false)`,
      description: 'Refused: the gateway is stateless',
    }),
    conversation: s.nullOnly({ message: `needs stored conversations; ${stateless} send the whole conversation in input`, description: 'Refused' }),
    prompt: s.nullOnly({ message: `templates are stored objects; ${stateless} send instructions and input instead`, description: 'Refused' }),
    background: s.anythingBut(true, { message: `responses are stored and polled; ${stateless} stream instead`, description: 'true is refused' }),
    routing: routingSchema,
  },
  {
    description:
      'An OpenAI Responses body. Stateless: previous_response_id, conversation, prompt and background are refused; other fields are ignored',
    message: 'must be a JSON object',
  },
);

export type ResponsesRequestBody = s.Infer<typeof responsesRequestSchema>;
export type InputItem = Exclude<ResponsesRequestBody['input'], string>[number];
export type UserPart = s.Infer<typeof userPart>;
export type ResponsesTool = NonNullable<ResponsesRequestBody['tools']>[number];
