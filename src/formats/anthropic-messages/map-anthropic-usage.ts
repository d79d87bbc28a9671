import type { Usage } from '../../canonical/chat-result.ts';
import type { AnthropicUsage } from './anthropic-wire-types.ts';

/**
 * Anthropic usage -> canonical usage. Anthropic's input_tokens leaves out cache reads and
 * writes, so the canonical total adds them back. Thinking tokens are part of output_tokens
 * and not reported apart, so reasoningTokens stays 0.
 * https://docs.anthropic.com/en/api/messages#response-usage
 */
export function mapAnthropicUsage(usage: AnthropicUsage): Usage {
  const cacheRead = count(usage.cache_read_input_tokens);
  const cacheWrite = count(usage.cache_creation_input_tokens);
  return {
    inputTokens: count(usage.input_tokens) + cacheRead + cacheWrite,
    cachedInputTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    outputTokens: count(usage.output_tokens),
    reasoningTokens: 0,
  };
}

/** A missing, null or nonsensical count bills as zero rather than poisoning the totals. */
function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}
