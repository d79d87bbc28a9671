import { MessageStreamEncoder } from './message-stream-encoder.ts';
import { parseBetas, parseMessagesRequest, parseVersion, type ParsedMessagesRequest } from './parse-messages-request.ts';
import { messageId, renderMessage } from './render-message.ts';
import type { ChatWire } from '../chat-wire.ts';

/** POST /v1/messages in the Anthropic Messages wire format. */
export const anthropicMessagesWire: ChatWire<ParsedMessagesRequest> = {
  parse: (body, headers) =>
    parseMessagesRequest(body, { betas: parseBetas(headers['anthropic-beta']), version: parseVersion(headers['anthropic-version']) }),
  answerId: messageId,
  startsWithUsage: true,
  renderResult: (context, result, usage) => renderMessage({ id: context.id, model: context.model, result, usage }),
  relayFor: () => ({ format: 'anthropic' }),
  createEncoder(context) {
    const encoder = new MessageStreamEncoder(context.id, context.model, context.startUsage);
    return {
      start: () => encoder.start(),
      part: (part) => encoder.part(part),
      end: (usage) => encoder.end(usage),
      fail: (error, requestId) => encoder.fail(error, requestId),
    };
  },
};
