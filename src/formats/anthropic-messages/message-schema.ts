import { anyObject, array, enumOf, integer, literal, nullable, object, string, tagged } from '../../lib/wire-schema.ts';

/**
 * What POST /v1/messages and /v1/messages/count_tokens answer (render-message.ts,
 * message-stream-encoder.ts), as the OpenAPI document shows it; the document test holds every
 * real answer to it. https://docs.anthropic.com/en/api/messages#response
 */

const count = () => integer({ minimum: 0 });

export const anthropicUsageSchema = object({
  input_tokens: count(),
  cache_creation_input_tokens: count(),
  cache_read_input_tokens: count(),
  output_tokens: count(),
});

const stopReason = enumOf(['end_turn', 'stop_sequence', 'max_tokens', 'tool_use', 'refusal']);

const textBlock = object({ type: literal('text'), text: string() });
const thinkingBlock = object({
  type: literal('thinking'),
  thinking: string(),
  signature: string({ description: '"" for reasoning its provider did not sign' }),
});
const redactedBlock = object({ type: literal('redacted_thinking'), data: string() });
const toolUseBlock = object({ type: literal('tool_use'), id: string(), name: string(), input: anyObject({ description: 'The arguments' }) });

const contentBlock = tagged('type', [thinkingBlock, redactedBlock, textBlock, toolUseBlock]);

export const messageSchema = object({
  id: string({ description: 'msg_<the request id suffix>' }),
  type: literal('message'),
  role: literal('assistant'),
  model: string({ description: 'The model that answered' }),
  content: array(contentBlock),
  stop_reason: nullable(stopReason, { description: 'null in message_start' }),
  stop_sequence: nullable(string(), { description: 'The stop sequence that ended the answer, when one did' }),
  usage: anthropicUsageSchema,
});

export const countTokensSchema = object({ input_tokens: count() });

const delta = tagged('type', [
  object({ type: literal('text_delta'), text: string() }),
  object({ type: literal('thinking_delta'), thinking: string() }),
  object({ type: literal('signature_delta'), signature: string() }),
  object({ type: literal('input_json_delta'), partial_json: string() }),
]);

/** The data of one event (its `event:` is the same type); a failure after the start is an AnthropicError event, and nothing after it. */
export const messageStreamEventSchema = tagged('type', [
  object({ type: literal('message_start'), message: messageSchema }),
  object({ type: literal('content_block_start'), index: count(), content_block: contentBlock }),
  object({ type: literal('content_block_delta'), index: count(), delta }),
  object({ type: literal('content_block_stop'), index: count() }),
  object({
    type: literal('message_delta'),
    delta: object({ stop_reason: stopReason, stop_sequence: nullable(string()) }),
    usage: anthropicUsageSchema,
  }),
  object({ type: literal('message_stop') }),
]);
