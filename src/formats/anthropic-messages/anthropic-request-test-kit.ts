import type { ChatMessage, ChatRequest } from '../../canonical/chat-request.ts';
import { convertToAnthropicRequest, type AnthropicRequestInput } from './convert-to-anthropic-request.ts';

/** A user turn of one text part. */
export const user = (text: string): ChatMessage => ({ role: 'user', content: [{ type: 'text', text }] });

/** The Anthropic body for a canonical request with test defaults (model claude-test, 4,096 output tokens). */
export function convert(request: Partial<ChatRequest>, options: Partial<AnthropicRequestInput> = {}) {
  return convertToAnthropicRequest({
    request: { messages: [user('hi')], passThrough: { format: 'anthropic', fields: {} }, ...request },
    model: { upstream: 'claude-test' },
    maxOutputTokens: 4_096,
    ...options,
  });
}
