import * as s from '../../lib/wire-schema.ts';

/**
 * What POST /v1/chat/completions answers (render-chat-completion.ts, chat-chunk-encoder.ts), as
 * the OpenAPI document shows it; the document test holds every real answer to it.
 * https://platform.openai.com/docs/api-reference/chat/object
 */

const count = () => s.integer({ minimum: 0 });

export const chatUsageSchema = s.object({
  prompt_tokens: count(),
  completion_tokens: count(),
  total_tokens: count(),
  prompt_tokens_details: s.object({ cached_tokens: count() }),
  completion_tokens_details: s.object({ reasoning_tokens: count() }),
});

const finishReason = s.enumOf(['stop', 'length', 'tool_calls', 'content_filter']);

const head = (object: string) => ({
  id: s.string({ description: 'chatcmpl-<the request id suffix>' }),
  object: s.literal(object),
  created: s.integer(),
  model: s.string({ description: 'The model that answered' }),
});

export const chatCompletionSchema = s.object({
  ...head('chat.completion'),
  choices: s.array(
    s.object({
      index: s.integer(),
      message: s.object(
        {
          role: s.literal('assistant'),
          content: s.nullable(s.string(), { description: 'null when the answer is only tool calls' }),
          refusal: s.nullOnly(),
        },
        {
          reasoning_content: s.string({ description: 'Reasoning text, from models that show it' }),
          tool_calls: s.array(
            s.object({ id: s.string(), type: s.literal('function'), function: s.object({ name: s.string(), arguments: s.string() }) }),
          ),
        },
      ),
      logprobs: s.nullOnly(),
      finish_reason: finishReason,
    }),
  ),
  usage: chatUsageSchema,
});

/** One `data:` of the stream: the role first, then pieces, a finish reason, and with stream_options.include_usage a usage chunk (no choices). */
export const chatCompletionChunkSchema = s.object(
  {
    ...head('chat.completion.chunk'),
    choices: s.array(
      s.object({
        index: s.integer(),
        delta: s.object(
          {},
          {
            role: s.literal('assistant'),
            content: s.string(),
            reasoning_content: s.string(),
            tool_calls: s.array(
              s.object(
                { index: s.integer(), function: s.object({ arguments: s.string() }, { name: s.string() }) },
                { id: s.string(), type: s.literal('function') },
              ),
            ),
          },
        ),
        logprobs: s.nullOnly(),
        finish_reason: s.nullable(finishReason),
      }),
    ),
  },
  { usage: chatUsageSchema },
  { description: 'The stream ends with `data: [DONE]`, or, after a failure, with an Error envelope and no [DONE]' },
);
