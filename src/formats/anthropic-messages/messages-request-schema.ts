import { messagesField, modelField, positiveInteger, streamField } from '../openai-chat/chat-request-schema.ts';
import { routingSchema } from '../parse-routing.ts';
import * as s from '../../lib/wire-schema.ts';

/**
 * POST /v1/messages and /v1/messages/count_tokens, as far as the gateway reads them: the one
 * schema the parser checks bodies with and the OpenAPI document shows. Cache breakpoints, signed
 * thinking and tool-result images are read so an Anthropic model gets them back unchanged; other
 * fields reach Anthropic-format providers as sent.
 * https://docs.anthropic.com/en/api/messages#body-messages
 */

export const ANTHROPIC_MESSAGES_DOCS = 'https://docs.anthropic.com/en/api/messages';
export const ANTHROPIC_COUNT_TOKENS_DOCS = 'https://docs.anthropic.com/en/api/messages-count-tokens';

const cacheControl = { cache_control: s.nullable(s.anyObject({ description: "A cache breakpoint, e.g. {type: 'ephemeral'}" })) };

const textBlock = s.object({ type: s.literal('text'), text: s.string() }, cacheControl);

/** `system`, or a `role: "system"` message (Claude Code sends its prompt so to models it does not know). */
const systemContent = s.union([s.string(), s.array(textBlock)], { message: 'must be a string or an array of text blocks' });

const imageBlock = s.object(
  {
    type: s.literal('image'),
    source: s.tagged('type', [
      s.object({ type: s.literal('base64'), media_type: s.string(), data: s.string() }, {}, { missing: 'needs media_type and data' }),
      s.object({ type: s.literal('url'), url: s.string({ notEmpty: true }) }),
    ]),
  },
  cacheControl,
);

/** Plain-text documents are text to any model; PDFs and files have no canonical part yet. */
const documentBlock = s.object(
  {
    type: s.literal('document'),
    source: s.object(
      { type: s.literal('text', { message: 'must be "text": only documents with a text source are supported' }), data: s.string() },
      {},
      { missing: 'needs type "text" and data: only documents with a text source are supported' },
    ),
  },
  cacheControl,
);

const toolResultBlock = s.object(
  { type: s.literal('tool_result'), tool_use_id: s.string({ notEmpty: true, message: 'must be a string' }) },
  {
    content: s.nullable(s.union([s.string(), s.array(s.tagged('type', [textBlock, imageBlock, documentBlock]))]), {
      message: 'must be a string or an array of text and image blocks',
    }),
    is_error: s.nullable(s.boolean()),
    ...cacheControl,
  },
);

/** A user turn; its tool results become tool messages, before the rest, as Anthropic orders them. */
const userContent = s.union([s.string(), s.array(s.tagged('type', [textBlock, imageBlock, documentBlock, toolResultBlock]))], {
  message: 'must be a string or an array of content blocks',
});

/** Blocks of Anthropic's own tools (server_tool_use and their results) have no canonical form: the turn keeps the rest. */
const assistantContent = s.union(
  [
    s.string(),
    s.array(
      s.taggedOpen('type', [
        textBlock,
        s.object({ type: s.literal('thinking'), thinking: s.string() }, { signature: s.nullable(s.string()), ...cacheControl }),
        s.object({ type: s.literal('redacted_thinking'), data: s.string() }, cacheControl),
        s.object(
          { type: s.literal('tool_use'), id: s.string(), name: s.string() },
          { input: s.anyObject({ description: 'The arguments' }), ...cacheControl },
          { missing: 'needs id and name' },
        ),
      ]),
    ),
  ],
  { message: 'must be a string or an array of content blocks' },
);

const message = s.tagged('role', [
  s.object({ role: s.literal('user'), content: userContent }),
  s.object({ role: s.literal('assistant'), content: assistantContent }),
  s.object({ role: s.literal('system'), content: systemContent }),
]);

/** A client tool (with input_schema) or one of Anthropic's own (with a `type`); other fields go to Anthropic models as sent. */
const tool = s.object(
  { name: s.string({ notEmpty: true, message: 'is required' }) },
  { description: s.nullable(s.string()), input_schema: s.anyObject({ description: 'JSON Schema of the input' }), ...cacheControl },
);

const parallel = { disable_parallel_tool_use: s.boolean() };

const toolChoice = s.tagged(
  'type',
  [
    s.object({ type: s.enumOf(['auto', 'any']) }, parallel),
    s.object({ type: s.literal('tool'), name: s.string({ notEmpty: true, message: 'is required when type is tool' }) }, parallel),
    s.object({ type: s.literal('none') }),
  ],
  { message: 'must be an object' },
);

/** Enabled thinking with a budget, disabled, or adaptive (and kinds added later): the model decides. */
const thinking = s.taggedOpen(
  'type',
  [s.object({ type: s.literal('enabled'), budget_tokens: s.integer({ minimum: 1 }) }), s.object({ type: s.enumOf(['disabled', 'adaptive']) })],
  { message: 'must be an object with a type' },
);

const outputConfig = s.object(
  {},
  {
    effort: s.nullable(s.enumOf(['low', 'medium', 'high', 'max'], { description: 'https://docs.anthropic.com/en/docs/build-with-claude/effort' })),
    format: s.nullable(
      s.anyObject({ description: 'type json_schema with a schema asks for structured output; other formats reach Anthropic models as sent' }),
    ),
  },
  { message: 'must be an object' },
);

const optional = {
  system: s.nullable(systemContent),
  max_tokens: positiveInteger('Clamped to what the answering model allows'),
  stream: streamField,
  stop_sequences: s.nullable(s.array(s.string())),
  temperature: s.nullable(s.number()),
  top_p: s.nullable(s.number()),
  top_k: s.nullable(s.integer({ minimum: 0, description: 'Checked, then sent on as it is: for Anthropic models only' })),
  tools: s.nullable(s.array(tool)),
  tool_choice: s.nullable(toolChoice),
  thinking: s.nullable(thinking),
  output_config: s.nullable(outputConfig),
  routing: routingSchema,
};

/** count_tokens reads the same body (max_tokens and stream unused there). */
export const messagesRequestSchema = s.object(
  {
    model: modelField,
    messages: messagesField(message, 'Anthropic messages and content blocks'),
  },
  optional,
  { description: 'An Anthropic Messages body; other fields reach Anthropic-format providers unchanged', message: 'must be a JSON object' },
);

export type MessagesRequestBody = s.Infer<typeof messagesRequestSchema>;
export type MessageBody = MessagesRequestBody['messages'][number];
export type UserContent = Extract<MessageBody, { role: 'user' }>['content'];
export type AssistantContent = Extract<MessageBody, { role: 'assistant' }>['content'];
export type SystemContent = Extract<MessageBody, { role: 'system' }>['content'];
