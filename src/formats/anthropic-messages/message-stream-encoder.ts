import type { GatewayError } from '../../errors/gateway-error.ts';
import { renderAnthropicError } from '../../errors/render-error.ts';
import type { AnthropicReasoning } from '../../canonical/chat-request.ts';
import type { Usage } from '../../canonical/chat-result.ts';
import type { StreamPart } from '../../canonical/stream-part.ts';
import { renderAnthropicUsage, renderStopReason } from './render-message.ts';

type OpenBlock = { kind: 'text' | 'tool' | 'thinking' | 'redacted'; index: number };

function event(type: string, payload: Record<string, unknown> = {}): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;
}

/**
 * Canonical stream parts -> the Anthropic Messages event stream: message_start, then per
 * content block content_block_start, its deltas and content_block_stop (thinking, text and
 * tool_use blocks numbered in order), then message_delta with the stop reason and usage, and
 * message_stop. message_start carries the input count (the provider's when it gave one at the
 * start, else the gateway's count of the prompt): some clients (LangChain) read input usage only
 * there; message_delta carries the exact counts at the end, as Anthropic's own stream does.
 * https://docs.anthropic.com/en/docs/build-with-claude/streaming
 */
export class MessageStreamEncoder {
  private open: OpenBlock | null = null;
  private nextIndex = 0;
  /** Canonical tool-call index -> content block index. */
  private readonly toolBlocks = new Map<number, number>();
  private stopReason = 'end_turn';
  private stopSequence: string | null = null;

  /** `startUsage`: the provider's prompt count when it gave one before the content, else the gateway's count of the prompt. */
  constructor(
    private readonly id: string,
    private readonly model: string,
    private readonly startUsage: Pick<Usage, 'inputTokens' | 'cachedInputTokens' | 'cacheWriteTokens'> = {
      inputTokens: 0,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
    },
  ) {}

  start(): string {
    return event('message_start', {
      message: {
        id: this.id,
        type: 'message',
        role: 'assistant',
        model: this.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: renderAnthropicUsage({ ...this.startUsage, outputTokens: 0, reasoningTokens: 0 }),
      },
    });
  }

  /** Encode one part; returns '' for parts with nothing to send. */
  part(part: StreamPart): string {
    switch (part.type) {
      case 'text-delta':
        if (part.text === '') return '';
        return this.ensureOpen('text', { type: 'text', text: '' }) + this.delta({ type: 'text_delta', text: part.text });
      case 'reasoning-delta':
        if (part.text === '') return '';
        return this.ensureThinking() + this.delta({ type: 'thinking_delta', thinking: part.text });
      case 'relayed':
        // The provider's own content blocks, as it numbered them: none goes through this encoder's blocks.
        return part.events;
      case 'reasoning-end':
        return this.endThinking(part.providerMetadata?.anthropic);
      case 'tool-call-start': {
        const index = this.nextIndex;
        this.toolBlocks.set(part.index, index);
        return this.close() + this.startBlock({ kind: 'tool', index }, { type: 'tool_use', id: part.id, name: part.name, input: {} });
      }
      case 'tool-call-delta': {
        const index = this.toolBlocks.get(part.index);
        if (index === undefined || part.argumentsDelta === '') return '';
        return event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: part.argumentsDelta } });
      }
      case 'finish':
        this.stopReason = renderStopReason(part.finishReason, part.stopSequence);
        this.stopSequence = part.finishReason === 'stop' ? (part.stopSequence ?? null) : null;
        return this.close();
    }
  }

  /** After the finish part: the stop reason with the final usage, then message_stop. */
  end(usage: Usage): string {
    return (
      event('message_delta', { delta: { stop_reason: this.stopReason, stop_sequence: this.stopSequence }, usage: renderAnthropicUsage(usage) }) +
      event('message_stop')
    );
  }

  /** A failure after the stream began, as Anthropic sends it: an error event, and nothing after it. */
  fail(error: GatewayError, requestId: string): string {
    return `event: error\ndata: ${JSON.stringify(renderAnthropicError(error, requestId))}\n\n`;
  }

  private delta(delta: Record<string, unknown>): string {
    return event('content_block_delta', { index: this.open!.index, delta });
  }

  private startBlock(block: OpenBlock, contentBlock: Record<string, unknown>): string {
    this.open = block;
    this.nextIndex++;
    return event('content_block_start', { index: block.index, content_block: contentBlock });
  }

  private ensureOpen(kind: 'text', contentBlock: Record<string, unknown>): string {
    if (this.open?.kind === kind) return '';
    return this.close() + this.startBlock({ kind, index: this.nextIndex }, contentBlock);
  }

  private ensureThinking(): string {
    if (this.open?.kind === 'thinking') return '';
    return this.close() + this.startBlock({ kind: 'thinking', index: this.nextIndex }, { type: 'thinking', thinking: '', signature: '' });
  }

  /**
   * A reasoning block ends: a signed one with its signature, a redacted one as a block of its
   * own; reasoning after it opens a new thinking block.
   */
  private endThinking(anthropic: AnthropicReasoning | undefined): string {
    if (anthropic?.redactedData !== undefined)
      return (
        this.close() +
        this.startBlock({ kind: 'redacted', index: this.nextIndex }, { type: 'redacted_thinking', data: anthropic.redactedData }) +
        this.close()
      );
    if (anthropic?.signature === undefined) return this.open?.kind === 'thinking' ? this.close() : '';
    return this.ensureThinking() + this.delta({ type: 'signature_delta', signature: anthropic.signature }) + this.close();
  }

  private close(): string {
    if (!this.open) return '';
    const { index } = this.open;
    this.open = null;
    return event('content_block_stop', { index });
  }
}
