import * as s from '../../lib/wire-schema.ts';

/**
 * What POST /v1/messages and /v1/messages/count_tokens answer (render-message.ts,
 * message-stream-encoder.ts), as the OpenAPI document shows it; the document test holds every
 * real answer to it. https://docs.anthropic.com/en/api/messages#response
 */

const count = () => s.integer({ minimum: 0 });

export const anthropicUsageSchema = s.object({
  input_tokens: count(),
  cache_creation_input_tokens: count(),
  cache_read_input_tokens: count(),
  output_tokens: count(),
});

const stopReason = s.enumOf(['end_turn', 'stop_sequence', 'max_tokens', 'tool_use', 'refusal']);

const textBlock = s.object({ type: s.literal('text'), text: s.string() });
const thinkingBlock = s.object({
  type: s.literal('thinking'),
  thinking: s.string(),
  signature: s.string({ description: '"" for reasoning its provider did not sign' }),
});
const redactedBlock = s.object({ type: s.literal('redacted_thinking'), data: s.string() });
const toolUseBlock = s.object({
  type: s.literal('tool_use'),
  id: s.string(),
  name: s.string(),
  input: s.anyObject({ description: 'The arguments' }),
});

const contentBlock = s.tagged('type', [thinkingBlock, redactedBlock, textBlock, toolUseBlock]);

export const messageSchema = s.object({
  id: s.string({ description: 'msg_<the request id suffix>' }),
  type: s.literal('message'),
  role: s.literal('assistant'),
  model: s.string({ description: 'The model that answered' }),
  content: s.array(contentBlock),
  stop_reason: s.nullable(stopReason, { description: 'null in message_start' }),
  stop_sequence: s.nullable(s.string(), { description: 'The stop sequence that ended the answer, when one did' }),
  usage: anthropicUsageSchema,
});

export const countTokensSchema = s.object({ input_tokens: count() });

const delta = s.tagged('type', [
  s.object({ type: s.literal('text_delta'), text: s.string() }),
  s.object({ type: s.literal('thinking_delta'), thinking: s.string() }),
  s.object({ type: s.literal('signature_delta'), signature: s.string() }),
  s.object({ type: s.literal('input_json_delta'), partial_json: s.string() }),
]);

/** The data of one event (its `event:` is the same type); a failure after the start is an AnthropicError event, and nothing after it. */
export const messageStreamEventSchema = s.tagged('type', [
  s.object({ type: s.literal('message_start'), message: messageSchema }),
  s.object({ type: s.literal('content_block_start'), index: count(), content_block: contentBlock }),
  s.object({ type: s.literal('content_block_delta'), index: count(), delta }),
  s.object({ type: s.literal('content_block_stop'), index: count() }),
  s.object({
    type: s.literal('message_delta'),
    delta: s.object({ stop_reason: stopReason, stop_sequence: s.nullable(s.string()) }),
    usage: anthropicUsageSchema,
  }),
  s.object({ type: s.literal('message_stop') }),
]);
