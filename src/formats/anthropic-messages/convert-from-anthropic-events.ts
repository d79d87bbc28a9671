import type { Usage } from '../../canonical/chat-result.ts';
import type { StreamPart } from '../../canonical/stream-part.ts';
import { isRecord, type AnthropicStreamEvent, type AnthropicUsage } from './anthropic-wire-types.ts';
import { AnthropicFormatError, AnthropicStreamInterrupted, describeError } from './anthropic-format-errors.ts';
import { mapAnthropicStopReason } from './map-anthropic-stop-reason.ts';
import { mapAnthropicUsage } from './map-anthropic-usage.ts';

/**
 * Anthropic stream events -> canonical stream parts, as a synchronous stage: `accept` each event,
 * then `finish` once the body ended. The parts end with exactly one `finish` (at message_stop).
 * Throws AnthropicStreamInterrupted for an `event: error` or a stream that ends before
 * message_stop, AnthropicFormatError for events without the documented fields.
 * https://docs.anthropic.com/en/docs/build-with-claude/streaming
 */
export class AnthropicStreamState {
  finished = false;
  // Usage arrives in halves: the input side in message_start, the output count in message_delta.
  private usage: AnthropicUsage | undefined;
  private stopReason: string | undefined;
  private stopSequence: string | undefined;
  // Content block index -> tool call index; tool calls are numbered 0, 1, ... apart from text blocks.
  private readonly toolIndexByBlock = new Map<number, number>();
  private nextToolIndex = 0;
  // Tool blocks whose input has not streamed a fragment yet.
  private readonly toolsWithoutInput = new Set<number>();

  /** `onInputUsage` is told the prompt count message_start carries, before any content. */
  constructor(private readonly onInputUsage?: (usage: Usage) => void) {}

  accept(event: AnthropicStreamEvent): StreamPart[] {
    // Events after message_stop are read (draining the body lets the connection be reused) and ignored.
    if (this.finished) return [];
    switch (event.type) {
      case 'message_start':
        if (isRecord(event.message) && isRecord(event.message.usage)) {
          this.addUsage(event.message.usage);
          this.onInputUsage?.(mapAnthropicUsage(this.usage!));
        }
        return [];
      case 'content_block_start':
        return this.startBlock(blockIndex(event), field(event, 'content_block'));
      case 'content_block_delta':
        return this.continueBlock(blockIndex(event), field(event, 'delta'));
      case 'message_delta':
        if (isRecord(event.delta) && typeof event.delta.stop_reason === 'string') this.stopReason = event.delta.stop_reason;
        if (isRecord(event.delta) && typeof event.delta.stop_sequence === 'string') this.stopSequence = event.delta.stop_sequence;
        if (isRecord(event.usage)) this.addUsage(event.usage);
        return [];
      case 'message_stop':
        this.finished = true;
        return [
          {
            type: 'finish',
            finishReason: mapAnthropicStopReason(this.stopReason),
            ...(this.usage ? { usage: mapAnthropicUsage(this.usage) } : {}),
            ...(this.stopReason === 'stop_sequence' && this.stopSequence !== undefined ? { stopSequence: this.stopSequence } : {}),
          },
        ];
      case 'content_block_stop': {
        // A tool called without input streams no fragment; its arguments are the empty object.
        const toolIndex = this.toolIndexByBlock.get(blockIndex(event));
        if (toolIndex === undefined || !this.toolsWithoutInput.delete(toolIndex)) return [];
        return [{ type: 'tool-call-delta', index: toolIndex, argumentsDelta: '{}' }];
      }
      case 'error':
        throw new AnthropicStreamInterrupted(`stream error: ${describeError(event) ?? 'unknown error'}`);
      default:
        // ping, and event types added after this was written.
        return [];
    }
  }

  private startBlock(index: number, block: Record<string, unknown>): StreamPart[] {
    switch (block.type) {
      case 'text':
        return typeof block.text === 'string' && block.text !== '' ? [{ type: 'text-delta', text: block.text }] : [];
      case 'thinking':
        return typeof block.thinking === 'string' && block.thinking !== '' ? [{ type: 'reasoning-delta', text: block.thinking }] : [];
      case 'tool_use': {
        if (typeof block.id !== 'string' || typeof block.name !== 'string') throw new AnthropicFormatError('tool_use block without id or name');
        const toolIndex = this.nextToolIndex++;
        this.toolIndexByBlock.set(index, toolIndex);
        this.toolsWithoutInput.add(toolIndex);
        return [{ type: 'tool-call-start', index: toolIndex, id: block.id, name: block.name }];
      }
      case 'redacted_thinking':
        // A whole block in its start event: it ends there.
        return typeof block.data === 'string' ? [{ type: 'reasoning-end', providerMetadata: { anthropic: { redactedData: block.data } } }] : [];
      default:
        // Server tool blocks carry nothing the canonical parts can hold.
        return [];
    }
  }

  private continueBlock(index: number, delta: Record<string, unknown>): StreamPart[] {
    switch (delta.type) {
      case 'text_delta':
        return [{ type: 'text-delta', text: stringField(delta, 'text') }];
      case 'thinking_delta':
        return [{ type: 'reasoning-delta', text: stringField(delta, 'thinking') }];
      case 'input_json_delta': {
        const toolIndex = this.toolIndexByBlock.get(index);
        if (toolIndex === undefined) throw new AnthropicFormatError(`input_json_delta for block ${index}, which is not a tool_use`);
        const argumentsDelta = stringField(delta, 'partial_json');
        // Anthropic opens every tool input with an empty fragment; it says nothing.
        if (argumentsDelta === '') return [];
        this.toolsWithoutInput.delete(toolIndex);
        return [{ type: 'tool-call-delta', index: toolIndex, argumentsDelta }];
      }
      case 'signature_delta':
        // The signature is a thinking block's last delta.
        return [{ type: 'reasoning-end', providerMetadata: { anthropic: { signature: stringField(delta, 'signature') } } }];
      default:
        // citations_delta has no canonical counterpart.
        return [];
    }
  }

  /** The body ended: a stream cut before message_stop is a failure. */
  finish(): void {
    if (!this.finished) throw new AnthropicStreamInterrupted('the stream ended before message_stop');
  }

  /** Later counts replace earlier ones: message_delta's usage is cumulative. */
  private addUsage(usage: Record<string, unknown>): void {
    this.usage = { ...this.usage };
    for (const key of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const) {
      const value = usage[key];
      if (typeof value === 'number') this.usage[key] = value;
    }
  }
}

function blockIndex(event: AnthropicStreamEvent): number {
  if (typeof event.index !== 'number') throw new AnthropicFormatError(`${event.type} without an index`);
  return event.index;
}

function field(event: AnthropicStreamEvent, name: string): Record<string, unknown> {
  const value = event[name];
  if (!isRecord(value)) throw new AnthropicFormatError(`${event.type} without ${name}`);
  return value;
}

function stringField(delta: Record<string, unknown>, name: string): string {
  const value = delta[name];
  if (typeof value !== 'string') throw new AnthropicFormatError(`${String(delta.type)} without ${name}`);
  return value;
}
