import type { ToolCall } from '../../canonical/chat-request.ts';
import type { ChatResult, ResultReasoningBlock } from '../../canonical/chat-result.ts';
import { isRecord, type AnthropicUsage } from './anthropic-wire-types.ts';
import { AnthropicFormatError } from './anthropic-format-errors.ts';
import { mapAnthropicStopReason } from './map-anthropic-stop-reason.ts';
import { mapAnthropicUsage } from './map-anthropic-usage.ts';

/**
 * A non-streaming Messages API answer -> canonical result; AnthropicFormatError when it does
 * not have the documented shape. Thinking keeps its signature and redacted thinking its data, as Anthropic metadata; block types this adapter does not know (server tools) are skipped.
 * https://docs.anthropic.com/en/api/messages#response-content
 */
export function convertFromAnthropicMessage(body: unknown): ChatResult {
  if (!isRecord(body) || !Array.isArray(body.content)) throw new AnthropicFormatError('no content array');
  let text = '';
  let reasoning: string | undefined;
  const reasoningBlocks: ResultReasoningBlock[] = [];
  const toolCalls: ToolCall[] = [];
  for (const block of body.content) {
    if (!isRecord(block)) throw new AnthropicFormatError('a content block is not an object');
    if (block.type === 'text') {
      if (typeof block.text !== 'string') throw new AnthropicFormatError('text block without text');
      text += block.text;
    } else if (block.type === 'thinking') {
      if (typeof block.thinking !== 'string') throw new AnthropicFormatError('thinking block without thinking');
      reasoning = (reasoning ?? '') + block.thinking;
      reasoningBlocks.push(
        typeof block.signature === 'string'
          ? { text: block.thinking, providerMetadata: { anthropic: { signature: block.signature } } }
          : { text: block.thinking },
      );
    } else if (block.type === 'redacted_thinking') {
      if (typeof block.data === 'string') reasoningBlocks.push({ text: '', providerMetadata: { anthropic: { redactedData: block.data } } });
    } else if (block.type === 'tool_use') {
      if (typeof block.id !== 'string' || typeof block.name !== 'string') throw new AnthropicFormatError('tool_use block without id or name');
      toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) });
    }
  }
  const result: ChatResult = {
    content: text,
    toolCalls,
    finishReason: mapAnthropicStopReason(typeof body.stop_reason === 'string' ? body.stop_reason : undefined),
  };
  if (reasoning !== undefined) result.reasoning = reasoning;
  if (reasoningBlocks.length > 0) result.reasoningBlocks = reasoningBlocks;
  if (body.stop_reason === 'stop_sequence' && typeof body.stop_sequence === 'string') result.stopSequence = body.stop_sequence;
  if (isRecord(body.usage)) result.usage = mapAnthropicUsage(body.usage as AnthropicUsage);
  return result;
}
