import type { ChatRequest } from '../protocol/canonical/chat-request.ts';
import type { ModelConfig } from '../config/schema.ts';

/**
 * Token estimates the gateway makes when a provider has not told it (context filter, a stream
 * cut short). Roughly one token per three bytes of UTF-8, which is above real tokenizers for
 * prose and code and near them for non-Latin text.
 */
export function estimateTextTokens(text: string): number {
  return text.length === 0 ? 0 : Math.ceil(Buffer.byteLength(text, 'utf8') / 3);
}

const PER_MESSAGE_OVERHEAD = 4;

/** Estimated prompt tokens of a request for one model; images count at the model's maximum. */
export function estimateInputTokens(request: ChatRequest, model: ModelConfig): number {
  let tokens = 3;
  for (const message of request.messages) {
    tokens += PER_MESSAGE_OVERHEAD;
    if (message.role === 'user') {
      for (const part of message.content) tokens += part.type === 'text' ? estimateTextTokens(part.text) : model.maxImageTokens;
    } else if (message.role === 'assistant') {
      tokens += estimateTextTokens(message.content ?? '');
      for (const call of message.toolCalls ?? []) tokens += estimateTextTokens(call.name) + estimateTextTokens(call.arguments) + 3;
    } else {
      tokens += estimateTextTokens(message.content);
    }
  }
  for (const tool of request.tools ?? []) {
    tokens += estimateTextTokens(tool.name) + estimateTextTokens(tool.description ?? '') + estimateTextTokens(JSON.stringify(tool.parameters ?? {}));
  }
  return tokens;
}
