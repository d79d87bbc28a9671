import type { SseEvent } from '../sse/parse-sse.ts';
import { isRecord, type OpenAIChatCompletion } from './openai-chat-wire-types.ts';
import { invalidResponse, providerFailedError } from './openai-chat-errors.ts';
import { RepeatedChunkShape } from './repeated-chunk-shape.ts';

/**
 * SSE events -> chat.completion.chunk objects, one at a time, up to `data: [DONE]`. Keeps reading after it:
 * draining the body is what lets the keep-alive connection be reused. An `event: error`
 * (and any chunk carrying `error`) ends the stream as a provider failure.
 * https://platform.openai.com/docs/api-reference/chat-streaming
 */
export class OpenAIChunkReader {
  private done = false;
  /** Learned from the first plain text delta: the events after it are read by their text alone. */
  private shape: RepeatedChunkShape | undefined;

  /**
   * The text-delta part of an event read by its text alone (a plain text delta with the bytes of
   * the one learned around it), carrying the text's JSON string as the provider wrote it; else
   * undefined, and `read` parses the event.
   */
  textDelta(event: SseEvent): { type: 'text-delta'; text: string; json: string } | undefined {
    if (this.done || this.shape === undefined) return undefined;
    const delta = this.shape.text(event);
    return delta && { type: 'text-delta', text: delta.text, json: delta.json };
  }

  /** A text delta (`textDelta`'s JSON string) as relayed to a client of this format after the gateway's `head`, when the learned shape relays. */
  relayed(json: string, head: string): string | undefined {
    return this.shape?.relayed(json, head);
  }

  /** The chunk an event carries; undefined for [DONE] and whatever follows it. Throws a provider failure. */
  read(event: SseEvent): OpenAIChatCompletion | undefined {
    if (this.done) return undefined;
    if (event.data === '[DONE]') {
      this.done = true;
      return undefined;
    }
    let payload: unknown;
    try {
      payload = JSON.parse(event.data);
    } catch {
      throw invalidResponse('a stream event is not JSON');
    }
    if (!isRecord(payload)) throw invalidResponse('a stream event is not an object');
    const chunk = payload as OpenAIChatCompletion;
    if (chunk.error) throw providerFailedError(chunk.error);
    if (event.event === 'error') throw providerFailedError(payload as { message?: unknown });
    this.shape ??= RepeatedChunkShape.learn(event, chunk);
    return chunk;
  }
}
