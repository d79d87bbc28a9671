import type { Usage } from '../../canonical/chat-result.ts';
import { isRecord, type OpenAIChatCompletion, type OpenAIUsage } from './openai-chat-wire-types.ts';

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0);

/**
 * OpenAI usage -> canonical; null when the provider sent none. prompt_tokens already counts
 * cached and cache-written tokens. Cache writes are OpenRouter's (for models that bill them);
 * prompt_cache_hit_tokens is DeepSeek's older name for cached tokens.
 * https://platform.openai.com/docs/api-reference/chat/object#chat/object-usage
 */
export function parseOpenAIUsage(raw: OpenAIUsage | null | undefined): Usage | null {
  if (!isRecord(raw)) return null;
  const promptDetails = isRecord(raw.prompt_tokens_details) ? raw.prompt_tokens_details : {};
  const completionDetails = isRecord(raw.completion_tokens_details) ? raw.completion_tokens_details : {};
  return {
    inputTokens: count(raw.prompt_tokens),
    cachedInputTokens: count(promptDetails.cached_tokens ?? raw.prompt_cache_hit_tokens),
    cacheWriteTokens: count(promptDetails.cache_write_tokens),
    outputTokens: count(raw.completion_tokens),
    reasoningTokens: count(completionDetails.reasoning_tokens),
  };
}

/** The usage a chat.completion or a chunk carries: the standard field, or Groq's `x_groq.usage`. */
export function usageOf(completion: OpenAIChatCompletion): Usage | null {
  return parseOpenAIUsage(completion.usage) ?? parseOpenAIUsage(isRecord(completion.x_groq) ? completion.x_groq.usage : null);
}
