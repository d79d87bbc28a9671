import type { FinishReason } from '../../protocol/canonical/chat-result.ts';

/** https://platform.openai.com/docs/api-reference/chat/object#chat/object-choices */
export function mapOpenAIFinishReason(reason: unknown): FinishReason {
  switch (reason) {
    case 'length':
      return 'length';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'content_filter':
      return 'content_filter';
    default:
      return 'stop';
  }
}
