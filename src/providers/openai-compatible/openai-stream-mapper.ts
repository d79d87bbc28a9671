import type { FinishReason, Usage } from '../../protocol/canonical/chat-result.ts';
import type { StreamPart } from '../../protocol/canonical/stream-part.ts';
import { ProviderError } from '../provider-error.ts';
import { mapOpenAIFinishReason } from './map-openai-finish-reason.ts';
import { parseOpenAIUsage } from './parse-openai-usage.ts';

/**
 * OpenAI chat.completion.chunk objects -> canonical parts. Keeps the state a stream needs:
 * which tool-call indexes have started, the finish reason, the usage chunk that may come
 * after it. Tool-call indexes are renumbered 0, 1, ... in order of appearance.
 */
export class OpenAIStreamMapper {
  private readonly toolIndexes = new Map<number, number>();
  private finishReason: FinishReason | null = null;
  private usage: Usage | null = null;

  *map(chunk: unknown): Generator<StreamPart> {
    if (typeof chunk !== 'object' || chunk === null) throw new ProviderError('invalid_response', 'stream chunk is not an object');
    const value = chunk as Record<string, any>;
    if (value.error) throw new ProviderError('unavailable', `the provider failed mid-stream: ${String(value.error?.message ?? 'unknown error')}`);
    const usage = parseOpenAIUsage(value.usage);
    if (usage) this.usage = usage;
    const choice = Array.isArray(value.choices) ? value.choices[0] : undefined;
    if (!choice) return;
    const delta = choice.delta ?? {};
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === 'string' && reasoning) yield { type: 'reasoning-delta', text: reasoning };
    if (typeof delta.content === 'string' && delta.content) yield { type: 'text-delta', text: delta.content };
    if (Array.isArray(delta.tool_calls)) {
      for (const call of delta.tool_calls) yield* this.toolCall(call);
    }
    if (choice.finish_reason) this.finishReason = mapOpenAIFinishReason(choice.finish_reason);
  }

  private *toolCall(call: any): Generator<StreamPart> {
    const upstreamIndex = typeof call?.index === 'number' ? call.index : 0;
    let index = this.toolIndexes.get(upstreamIndex);
    if (index === undefined) {
      index = this.toolIndexes.size;
      this.toolIndexes.set(upstreamIndex, index);
      yield { type: 'tool-call-start', index, id: String(call?.id ?? `call_${index}`), name: String(call?.function?.name ?? '') };
    }
    const args = call?.function?.arguments;
    if (typeof args === 'string' && args) yield { type: 'tool-call-delta', index, argumentsDelta: args };
  }

  /** The closing part, once the upstream stream ended with [DONE] or EOF. */
  finish(): StreamPart {
    if (this.finishReason === null) throw new ProviderError('unavailable', 'the provider stream ended before it finished');
    return this.usage ? { type: 'finish', finishReason: this.finishReason, usage: this.usage } : { type: 'finish', finishReason: this.finishReason };
  }
}
