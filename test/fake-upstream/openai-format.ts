import { countOpenAiPromptTokens, openAiTextTokens } from './count-prompt-tokens.ts';
import { splitIntoPieces, type ResolvedReply } from './scripted-reply.ts';
import { randomId, type WireEvent, type WireFormat } from './wire-format.ts';

/** OpenAI Chat Completions, as https://platform.openai.com/docs/api-reference/chat documents it. */
export const openAiFormat: WireFormat = {
  path: '/v1/chat/completions',

  validate(_headers, body) {
    if (typeof body.model !== 'string') return 'you must provide a model parameter';
    if (!Array.isArray(body.messages)) return "Missing required parameter: 'messages'.";
    return undefined;
  },

  newToolCallId: () => `call_${randomId(24)}`,

  countPromptTokens: countOpenAiPromptTokens,

  countTextTokens: openAiTextTokens,

  responseHeaders: () => ({ 'x-request-id': `req_${randomId(32)}`, 'openai-processing-ms': '12' }),

  body(reply) {
    const message: Record<string, unknown> = {
      role: 'assistant',
      // OpenAI sends null, not "", when the answer is only tool calls.
      content: reply.text === '' && reply.toolCalls.length > 0 ? null : reply.text,
      refusal: null,
      annotations: [],
    };
    if (reply.reasoning !== '') message.reasoning_content = reply.reasoning;
    if (reply.toolCalls.length > 0) {
      message.tool_calls = reply.toolCalls.map((call) => ({
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: call.arguments },
      }));
    }
    return {
      id: `chatcmpl-${randomId(29)}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: reply.model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: reply.finishReason }],
      usage: openAiUsage(reply),
      service_tier: 'default',
      system_fingerprint: 'fp_fake',
    };
  },

  streamEvents(reply, request) {
    const streamOptions = request.stream_options as { include_usage?: unknown } | undefined;
    const includeUsage = streamOptions?.include_usage === true;
    const base = {
      id: `chatcmpl-${randomId(29)}`,
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model: reply.model,
      service_tier: 'default',
      system_fingerprint: 'fp_fake',
    };
    const chunk = (delta: Record<string, unknown>, content: boolean, finishReason: string | null = null): WireEvent => ({
      data: JSON.stringify({
        ...base,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
        // With include_usage every chunk carries `usage: null` until the usage chunk.
        ...(includeUsage ? { usage: null } : {}),
      }),
      content,
    });

    const events: WireEvent[] = [chunk({ role: 'assistant', content: '', refusal: null }, false)];
    for (const piece of splitIntoPieces(reply.reasoning, reply.chunkSize)) events.push(chunk({ reasoning_content: piece }, true));
    for (const piece of splitIntoPieces(reply.text, reply.chunkSize)) events.push(chunk({ content: piece }, true));
    reply.toolCalls.forEach((call, index) => {
      events.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }, true));
      for (const piece of splitIntoPieces(call.arguments, reply.chunkSize)) {
        events.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }, true));
      }
    });
    events.push(chunk({}, false, reply.finishReason));
    if (includeUsage) {
      events.push({ data: JSON.stringify({ ...base, choices: [], usage: openAiUsage(reply) }), content: false });
    }
    events.push({ data: '[DONE]', content: false });
    return events;
  },

  errorBody(status, message) {
    const known = OPENAI_ERRORS[status] ?? {
      type: 'server_error',
      code: null,
      message: 'The server had an error while processing your request. Sorry about that!',
    };
    return { error: { message: message ?? known.message, type: known.type, param: null, code: known.code } };
  },

  streamErrorEvent: () => ({
    data: JSON.stringify({
      error: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null },
    }),
    content: false,
  }),
};

const OPENAI_ERRORS: Record<number, { type: string; code: string | null; message: string }> = {
  400: { type: 'invalid_request_error', code: null, message: 'Invalid request.' },
  401: { type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided.' },
  403: { type: 'invalid_request_error', code: 'unsupported_country_region_territory', message: 'Country, region, or territory not supported' },
  404: { type: 'invalid_request_error', code: 'model_not_found', message: 'The model does not exist or you do not have access to it.' },
  429: { type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached for requests. Please try again in 1s.' },
  503: { type: 'server_error', code: null, message: 'The engine is currently overloaded, please try again later.' },
};

function openAiUsage(reply: ResolvedReply): Record<string, unknown> {
  const { prompt, completion, cached, reasoning } = reply.usage;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: reasoning, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}
