import type { ModelConfig } from '../config/schema.ts';
import type { Usage } from '../canonical/chat-result.ts';
import { countTextTokens } from '../tokens/text-token-count.ts';
import type { PromptMeasure } from '../tokens/token-estimate.ts';

/**
 * Usage for an answer whose provider never reported it (a stream cut short, a cancelled
 * call): the whole prompt, which the provider has processed, plus what was forwarded.
 */
export async function estimateUsage(prompt: PromptMeasure, model: ModelConfig, forwardedText: string): Promise<Usage> {
  return {
    inputTokens: await prompt.fairCount(model),
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: await countTextTokens(forwardedText),
    reasoningTokens: 0,
  };
}
