import { isRecord, type OpenAIMessage } from './openai-chat-wire-types.ts';

/** Text and reasoning of one message or delta. */
export interface OpenAIMessageText {
  text: string;
  reasoning: string;
}

/**
 * The text and reasoning a message or delta carries. Reasoning comes as `reasoning_content`
 * (DeepSeek, older vLLM, xAI) or `reasoning` (OpenRouter, Ollama, newer vLLM); Mistral puts
 * both in a `content` array of text and thinking parts.
 */
export function readOpenAIMessage(message: OpenAIMessage): OpenAIMessageText {
  let reasoning = firstString(message.reasoning_content, message.reasoning);
  let text = '';
  const content = message.content;
  if (typeof content === 'string') {
    text = content;
  } else if (Array.isArray(content)) {
    for (const part of content) {
      if (!isRecord(part)) continue;
      if (part.type === 'text' && typeof part.text === 'string') text += part.text;
      else if (part.type === 'thinking') reasoning += thinkingText(part.thinking);
    }
  }
  return { text, reasoning };
}

function thinkingText(thinking: unknown): string {
  if (typeof thinking === 'string') return thinking;
  if (!Array.isArray(thinking)) return '';
  return thinking.map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : '')).join('');
}

function firstString(...values: unknown[]): string {
  for (const value of values) if (typeof value === 'string' && value !== '') return value;
  return '';
}
