import { array, enumOf, integer, literal, nullable, nullOnly, object, string } from '../../lib/wire-schema.ts';

/**
 * What POST /v1/chat/completions answers (render-chat-completion.ts, chat-chunk-encoder.ts), as
 * the OpenAPI document shows it; the document test holds every real answer to it.
 * https://platform.openai.com/docs/api-reference/chat/object
 */

const count = () => integer({ minimum: 0 });

export const chatUsageSchema = object({
  prompt_tokens: count(),
  completion_tokens: count(),
  total_tokens: count(),
  prompt_tokens_details: object({ cached_tokens: count() }),
  completion_tokens_details: object({ reasoning_tokens: count() }),
});

const finishReason = enumOf(['stop', 'length', 'tool_calls', 'content_filter']);

const head = (object: string) => ({
  id: string({ description: 'chatcmpl-<the request id suffix>' }),
  object: literal(object),
  created: integer(),
  model: string({ description: 'The model that answered' }),
});

export const chatCompletionSchema = object({
  ...head('chat.completion'),
  choices: array(
    object({
      index: integer(),
      message: object(
        {
          role: literal('assistant'),
          content: nullable(string(), { description: 'null when the answer is only tool calls' }),
          refusal: nullOnly(),
        },
        {
          reasoning_content: string({ description: 'Reasoning text, from models that show it' }),
          tool_calls: array(object({ id: string(), type: literal('function'), function: object({ name: string(), arguments: string() }) })),
        },
      ),
      logprobs: nullOnly(),
      finish_reason: finishReason,
    }),
  ),
  usage: chatUsageSchema,
});

/** One `data:` of the stream: the role first, then pieces, a finish reason, and with stream_options.include_usage a usage chunk (no choices). */
export const chatCompletionChunkSchema = object(
  {
    ...head('chat.completion.chunk'),
    choices: array(
      object({
        index: integer(),
        delta: object(
          {},
          {
            role: literal('assistant'),
            content: string(),
            reasoning_content: string(),
            tool_calls: array(
              object(
                { index: integer(), function: object({ arguments: string() }, { name: string() }) },
                { id: string(), type: literal('function') },
              ),
            ),
          },
        ),
        logprobs: nullOnly(),
        finish_reason: nullable(finishReason),
      }),
    ),
  },
  { usage: chatUsageSchema },
  { description: 'The stream ends with `data: [DONE]`, or, after a failure, with an Error envelope and no [DONE]' },
);
