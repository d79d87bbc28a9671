import type { SseEvent } from '../sse/parse-sse.ts';
import { isRecord } from './anthropic-wire-types.ts';

/**
 * The events of an Anthropic stream a Messages client gets as the provider sent them: its content
 * blocks as it numbered them (server tool blocks and citations included, which no other format
 * carries). message_start, message_delta and message_stop are the gateway's own: they carry its
 * id, the model that answered and the usage it charged. Pings are dropped: a ping must not commit
 * the stream to a provider that may still fail before its content (fallback happens until then).
 */
const RELAYED_EVENTS = new Set(['content_block_start', 'content_block_delta', 'content_block_stop']);

/** The event as relayed to a Messages client, or undefined when the gateway writes its own. */
export function relayedAnthropicEvent(event: SseEvent): string | undefined {
  if (event.event === undefined || !RELAYED_EVENTS.has(event.event)) return undefined;
  // One data line per line of the data (JSON from the provider has none inside).
  const data = event.data.includes('\n') ? event.data.split('\n').join('\ndata: ') : event.data;
  return `event: ${event.event}\ndata: ${data}\n\n`;
}

/** The text a relayed event carries, for an estimate when the provider never reports usage: read from its bytes only then. */
export function relayedAnthropicText(event: SseEvent): () => string {
  return () => {
    let payload: unknown;
    try {
      payload = JSON.parse(event.data);
    } catch {
      return '';
    }
    if (!isRecord(payload)) return '';
    const carried = isRecord(payload.delta) ? payload.delta : isRecord(payload.content_block) ? payload.content_block : {};
    for (const field of ['text', 'thinking', 'partial_json', 'name']) if (typeof carried[field] === 'string') return carried[field];
    return '';
  };
}
