import type { FinishReason, Usage } from '../../canonical/chat-result.ts';
import type { StreamPart } from '../../canonical/stream-part.ts';
import { ProviderError } from '../../providers/provider-error.ts';
import { isRecord, type OpenAIChatCompletion, type OpenAIToolCall } from './openai-chat-wire-types.ts';
import { firstChoice } from './convert-from-openai-response.ts';
import { mapOpenAIFinishReason } from './map-openai-finish-reason.ts';
import { usageOf } from './parse-openai-usage.ts';
import { readOpenAIMessage } from './read-openai-message.ts';

/**
 * chat.completion.chunk objects -> canonical parts: `accept` each chunk, then exactly one `finish`. The
 * finish waits for the end of the stream: OpenAI (with include_usage), Ollama and OpenRouter
 * send usage in a chunk after the one with finish_reason. A stream that ends without a
 * finish_reason was cut short and throws unavailable.
 * https://platform.openai.com/docs/api-reference/chat-streaming/streaming
 */
export class OpenAIStreamState {
  private finishReason: string | null = null;
  private usage: Usage | null = null;
  // Upstream tool-call key -> canonical index; calls are numbered 0, 1, ... in order of appearance.
  private readonly toolIndexes = new Map<string, number>();
  private lastToolKey: string | undefined;

  /** The parts one chunk carries (none for a usage-only chunk), in order. */
  accept(chunk: OpenAIChatCompletion): StreamPart[] {
    const parts: StreamPart[] = [];
    const usage = usageOf(chunk);
    if (usage) this.usage = usage;
    // Azure's first chunk (prompt filter results) and the usage chunk have no choices.
    const choice = firstChoice(chunk.choices);
    if (!choice) return parts;
    const delta = isRecord(choice.delta) ? choice.delta : {};
    const { text, reasoning } = readOpenAIMessage(delta);
    if (reasoning) parts.push({ type: 'reasoning-delta', text: reasoning });
    if (text) parts.push({ type: 'text-delta', text });
    if (Array.isArray(delta.tool_calls)) {
      for (const call of delta.tool_calls) if (isRecord(call)) this.toolCall(call, parts);
    }
    if (typeof choice.finish_reason === 'string' && choice.finish_reason !== '') this.finishReason = choice.finish_reason;
    return parts;
  }

  private toolCall(call: OpenAIToolCall, parts: StreamPart[]): void {
    const id = typeof call.id === 'string' && call.id !== '' ? call.id : undefined;
    const key = this.keyOf(call, id);
    let index = this.toolIndexes.get(key);
    if (index === undefined) {
      index = this.toolIndexes.size;
      this.toolIndexes.set(key, index);
      const name = typeof call.function?.name === 'string' ? call.function.name : '';
      parts.push({ type: 'tool-call-start', index, id: id ?? `call_${index}`, name });
    }
    this.lastToolKey = key;
    const args = call.function?.arguments;
    if (typeof args === 'string' && args !== '') parts.push({ type: 'tool-call-delta', index, argumentsDelta: args });
  }

  /**
   * Calls are keyed by their `index`. Gemini's compatible endpoint (and other servers) send
   * none: there a new id starts a new call and a delta without one continues the last call.
   */
  private keyOf(call: OpenAIToolCall, id: string | undefined): string {
    if (typeof call.index === 'number') return `index:${call.index}`;
    if (id !== undefined) return `id:${id}`;
    return this.lastToolKey ?? 'id:';
  }

  /** The closing part, once the chunks ended with [DONE] or EOF. */
  finish(): StreamPart {
    if (this.finishReason === null) throw new ProviderError('unavailable', 'the provider stream ended before it finished');
    const finishReason: FinishReason = mapOpenAIFinishReason(this.finishReason, this.toolIndexes.size > 0);
    return this.usage ? { type: 'finish', finishReason, usage: this.usage } : { type: 'finish', finishReason };
  }
}
