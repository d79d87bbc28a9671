import { modelField, positiveInteger, streamField } from '../openai-chat/chat-request-schema.ts';
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
  taggedOpen,
  union,
  type Infer,
} from '../../lib/wire-schema.ts';

/**
 * POST /v1/messages and /v1/messages/count_tokens, as far as the gateway reads them: the one
 * schema the parser checks bodies with and the OpenAPI document shows. Cache breakpoints, signed
 * thinking and tool-result images are read so an Anthropic model gets them back unchanged; other
 * fields reach Anthropic-format providers as sent.
 * https://docs.anthropic.com/en/api/messages#body-messages
 */

export const ANTHROPIC_MESSAGES_DOCS = 'https://docs.anthropic.com/en/api/messages';
export const ANTHROPIC_COUNT_TOKENS_DOCS = 'https://docs.anthropic.com/en/api/messages-count-tokens';

const cacheControl = { cache_control: nullable(anyObject({ description: "A cache breakpoint, e.g. {type: 'ephemeral'}" })) };

const textBlock = object({ type: literal('text'), text: string() }, cacheControl);

/** `system`, or a `role: "system"` message (Claude Code sends its prompt so to models it does not know). */
const systemContent = union([string(), array(textBlock)], { message: 'must be a string or an array of text blocks' });

const imageBlock = object(
  {
    type: literal('image'),
    source: tagged('type', [
      object({ type: literal('base64'), media_type: string(), data: string() }, {}, { missing: 'needs media_type and data' }),
      object({ type: literal('url'), url: string({ notEmpty: true }) }),
    ]),
  },
  cacheControl,
);

/** Plain-text documents are text to any model; PDFs and files have no canonical part yet. */
const documentBlock = object(
  {
    type: literal('document'),
    source: object(
      { type: literal('text', { message: 'must be "text": only documents with a text source are supported' }), data: string() },
      {},
      { missing: 'needs type "text" and data: only documents with a text source are supported' },
    ),
  },
  cacheControl,
);

const toolResultBlock = object(
  { type: literal('tool_result'), tool_use_id: string({ minLength: 1, message: 'must be a string' }) },
  {
    content: nullable(union([string(), array(tagged('type', [textBlock, imageBlock, documentBlock]))]), {
      message: 'must be a string or an array of text and image blocks',
    }),
    is_error: nullable(boolean()),
    ...cacheControl,
  },
);

/** A user turn; its tool results become tool messages, before the rest, as Anthropic orders them. */
const userContent = union([string(), array(tagged('type', [textBlock, imageBlock, documentBlock, toolResultBlock]))], {
  message: 'must be a string or an array of content blocks',
});

/** Blocks of Anthropic's own tools (server_tool_use and their results) have no canonical form: the turn keeps the rest. */
const assistantContent = union(
  [
    string(),
    array(
      taggedOpen('type', [
        textBlock,
        object({ type: literal('thinking'), thinking: string() }, { signature: nullable(string()), ...cacheControl }),
        object({ type: literal('redacted_thinking'), data: string() }, cacheControl),
        object(
          { type: literal('tool_use'), id: string(), name: string() },
          { input: anyObject({ description: 'The arguments' }), ...cacheControl },
          { missing: 'needs id and name' },
        ),
      ]),
    ),
  ],
  { message: 'must be a string or an array of content blocks' },
);

const message = tagged('role', [
  object({ role: literal('user'), content: userContent }),
  object({ role: literal('assistant'), content: assistantContent }),
  object({ role: literal('system'), content: systemContent }),
]);

/** A client tool (with input_schema) or one of Anthropic's own (with a `type`); other fields go to Anthropic models as sent. */
const tool = object(
  { name: string({ minLength: 1, message: 'is required' }) },
  { description: nullable(string()), input_schema: anyObject({ description: 'JSON Schema of the input' }), ...cacheControl },
);

const parallel = { disable_parallel_tool_use: boolean() };

const toolChoice = tagged(
  'type',
  [
    object({ type: enumOf(['auto', 'any']) }, parallel),
    object({ type: literal('tool'), name: string({ minLength: 1, message: 'is required when type is tool' }) }, parallel),
    object({ type: literal('none') }),
  ],
  { message: 'must be an object' },
);

/** Enabled thinking with a budget, disabled, or adaptive (and kinds added later): the model decides. */
const thinking = taggedOpen(
  'type',
  [object({ type: literal('enabled'), budget_tokens: integer({ minimum: 1 }) }), object({ type: enumOf(['disabled', 'adaptive']) })],
  { message: 'must be an object with a type' },
);

const outputConfig = object(
  {},
  {
    effort: nullable(enumOf(['low', 'medium', 'high', 'max'], { description: 'https://docs.anthropic.com/en/docs/build-with-claude/effort' })),
    format: nullable(
      anyObject({ description: 'type json_schema with a schema asks for structured output; other formats reach Anthropic models as sent' }),
    ),
  },
  { message: 'must be an object' },
);

const optional = {
  system: nullable(systemContent),
  max_tokens: positiveInteger('Clamped to what the answering model allows'),
  stream: streamField,
  stop_sequences: nullable(array(string())),
  temperature: nullable(number()),
  top_p: nullable(number()),
  top_k: nullable(integer({ minimum: 0, description: 'Checked, then sent on as it is: for Anthropic models only' })),
  tools: nullable(array(tool)),
  tool_choice: nullable(toolChoice),
  thinking: nullable(thinking),
  output_config: nullable(outputConfig),
  routing: routingSchema,
};

/** count_tokens reads the same body (max_tokens and stream unused there). */
export const messagesRequestSchema = object(
  {
    model: modelField,
    messages: array(message, {
      minItems: 1,
      description: 'Anthropic messages and content blocks',
      message: 'is required and must be a non-empty array',
    }),
  },
  optional,
  { description: 'An Anthropic Messages body; other fields reach Anthropic-format providers unchanged', message: 'must be a JSON object' },
);

export type MessagesRequestBody = Infer<typeof messagesRequestSchema>;
export type MessageBody = MessagesRequestBody['messages'][number];
export type UserContent = Extract<MessageBody, { role: 'user' }>['content'];
export type AssistantContent = Extract<MessageBody, { role: 'assistant' }>['content'];
export type SystemContent = Extract<MessageBody, { role: 'system' }>['content'];
