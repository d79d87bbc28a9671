import type { FinishReason } from '../../canonical/chat-result.ts';

/**
 * OpenAI finish_reason -> canonical. An answer that called tools finishes with tool_calls
 * even when the server said `stop`, as Ollama before 0.5.8, Gemini's compatible endpoint
 * and some gpt-4o snapshots do when streaming: clients only run tools on tool_calls.
 * https://platform.openai.com/docs/api-reference/chat/object#chat/object-choices
 */
export function mapOpenAIFinishReason(reason: unknown, calledTools = false): FinishReason {
  switch (reason) {
    case 'length':
      return 'length';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'content_filter':
      return 'content_filter';
    default:
      // stop, eos (some vLLM builds), null, and values added after this was written.
      return calledTools ? 'tool_calls' : 'stop';
  }
}
