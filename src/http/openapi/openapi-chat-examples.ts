import type { ChatResult, Usage } from '../../canonical/chat-result.ts';
import { messageId, renderMessage } from '../../formats/anthropic-messages/render-message.ts';
import { renderChatCompletion } from '../../formats/openai-chat/render-chat-completion.ts';
import { parseResponsesRequest } from '../../formats/openai-responses/parse-responses-request.ts';
import { renderResponse } from '../../formats/openai-responses/render-response.ts';

/**
 * The chat examples of the document: one small request per format, and its answer made by the
 * format's own renderer from one canonical result, so the examples say what the gateway sends.
 */

export const EXAMPLE_REQUEST_ID = 'req_01JD8X2S9T4V6W8Y0Z2A4C6E8G';
const suffix = EXAMPLE_REQUEST_ID.slice('req_'.length);
const created = 1_795_000_000;

const hello: ChatResult = { content: 'Hello.', toolCalls: [], finishReason: 'stop' };
const usage: Usage = { inputTokens: 9, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 2, reasoningTokens: 0 };
const ask = [{ role: 'user', content: 'Say hello.' }];

export const chatRequestExample = { model: 'svc/fast', messages: ask, routing: { fallback: true, allowed_models: ['up/alpha', 'up/beta'] } };

export const chatCompletionExample = renderChatCompletion({ id: `chatcmpl-${suffix}`, created, model: 'up/beta', result: hello, usage });

export const messagesRequestExample = { model: 'svc/balanced', max_tokens: 1024, messages: ask };

export const countTokensRequestExample = { model: 'svc/balanced', messages: ask };

export const messageExample = renderMessage({ id: messageId(EXAMPLE_REQUEST_ID), model: 'anth/claude', result: hello, usage });

export const responsesRequestExample = { model: 'svc/fast', input: 'Say hello.' };

export const responseExample = renderResponse({
  context: { id: `resp_${suffix}`, created, model: 'up/alpha' },
  result: hello,
  usage,
  parsed: parseResponsesRequest(responsesRequestExample),
});
