import type { SseEvent } from '../sse/parse-sse.ts';
import { isRecord, type AnthropicStreamEvent } from './anthropic-wire-types.ts';
import { AnthropicFormatError } from './anthropic-format-errors.ts';

/**
 * One SSE event -> one Anthropic stream event. Every event's data is a JSON object whose `type`
 * repeats the event name; anything else means the stream is not what Anthropic documents.
 * https://docs.anthropic.com/en/docs/build-with-claude/streaming#event-types
 */
export function readAnthropicEvent(event: SseEvent): AnthropicStreamEvent {
  let payload: unknown;
  try {
    payload = JSON.parse(event.data);
  } catch {
    throw new AnthropicFormatError(`the data of a ${event.event ?? 'message'} event is not JSON`);
  }
  if (!isRecord(payload) || typeof payload.type !== 'string') {
    throw new AnthropicFormatError(`a ${event.event ?? 'message'} event has no type`);
  }
  return payload as AnthropicStreamEvent;
}
