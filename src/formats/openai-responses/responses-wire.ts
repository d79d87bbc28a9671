import { renderOpenAIError } from '../../errors/render-error.ts';
import { parseResponsesRequest, type ParsedResponsesRequest } from './parse-responses-request.ts';
import { renderResponse } from './render-response.ts';
import { ResponsesStreamEncoder } from './responses-stream-encoder.ts';
import type { ChatWire } from '../chat-wire.ts';

/** POST /v1/responses in the OpenAI Responses wire format, served statelessly by any candidate. */
export const responsesWire: ChatWire<ParsedResponsesRequest> = {
  parse: parseResponsesRequest,
  answerId: (requestId) => `resp_${requestId.slice('req_'.length)}`,
  renderResult: (context, result, usage, parsed) => renderResponse({ context, result, usage, parsed }),
  createEncoder(context, parsed) {
    const encoder = new ResponsesStreamEncoder(context, parsed);
    return {
      start: () => encoder.start(),
      part: (part) => encoder.part(part),
      end: (usage) => encoder.end(usage),
      // response.failed: Codex retries it, and its `response.error` has the contract's fields.
      fail: (error, requestId) => encoder.fail(renderOpenAIError(error, requestId).error),
    };
  },
};
