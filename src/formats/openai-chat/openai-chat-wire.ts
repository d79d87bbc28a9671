import { ChatChunkEncoder, chunkHead } from './chat-chunk-encoder.ts';
import { parseChatCompletionRequest, type ParsedChatCompletion } from './parse-chat-request.ts';
import { renderChatCompletion } from './render-chat-completion.ts';
import { renderOpenAIError } from '../../errors/render-error.ts';
import type { ChatWire } from '../chat-wire.ts';

/** POST /v1/chat/completions in the OpenAI wire format. */
export const openAIChatWire: ChatWire<ParsedChatCompletion> = {
  parse: parseChatCompletionRequest,
  answerId: (requestId) => `chatcmpl-${requestId.slice(4)}`,
  renderResult: (context, result, usage) => renderChatCompletion({ ...context, result, usage }),
  relayFor: (context) => ({ format: 'openai', head: chunkHead(context.id, context.created, context.model) }),
  createEncoder(context, parsed) {
    const encoder = new ChatChunkEncoder(context.id, context.created, context.model);
    return {
      start: () => encoder.start(),
      part: (part) => encoder.part(part),
      end: (usage) => (parsed.includeUsage ? encoder.usage(usage) : '') + encoder.done(),
      // Rule 7: the error envelope as a data event, and no [DONE] after it.
      fail: (error, requestId) => `data: ${JSON.stringify(renderOpenAIError(error, requestId))}\n\n`,
    };
  },
};
