import type { Usage } from '../../protocol/canonical/chat-result.ts';

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0);

/** OpenAI usage -> canonical; null when the provider sent none. */
export function parseOpenAIUsage(raw: unknown): Usage | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const usage = raw as Record<string, any>;
  return {
    inputTokens: count(usage.prompt_tokens),
    cachedInputTokens: count(usage.prompt_tokens_details?.cached_tokens),
    cacheWriteTokens: 0,
    outputTokens: count(usage.completion_tokens),
    reasoningTokens: count(usage.completion_tokens_details?.reasoning_tokens),
  };
}
