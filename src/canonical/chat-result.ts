import type { ReasoningOptions, ToolCall } from './chat-request.ts';

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/** Token counts as a provider reported them, normalised. */
export interface Usage {
  /** Every prompt token, cached and cache-written ones included. */
  inputTokens: number;
  /** Prompt tokens read from the provider's cache (subset of inputTokens). */
  cachedInputTokens: number;
  /** Prompt tokens written to the provider's cache (subset of inputTokens). */
  cacheWriteTokens: number;
  /** Every output token, reasoning included. */
  outputTokens: number;
  /** Reasoning tokens (subset of outputTokens). */
  reasoningTokens: number;
}

/**
 * What a provider attached to the reasoning it produced, keyed by format (vercel/ai's
 * providerMetadata): the same data a client sends back as a reasoning block's providerOptions.
 */
export type ReasoningMetadata = ReasoningOptions;

/** One block of reasoning as the provider produced it: its text (empty for a hidden one) and its provider's data. */
export interface ResultReasoningBlock {
  text: string;
  providerMetadata?: ReasoningMetadata;
}

export interface ChatResult {
  content: string;
  /** All reasoning text, joined. */
  reasoning?: string;
  /** The same reasoning as the provider's blocks, when it attaches data to them (Anthropic's signatures). */
  reasoningBlocks?: ResultReasoningBlock[];
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  /** The client's stop sequence that ended the answer, when the provider says which. */
  stopSequence?: string;
  /** Absent when the provider did not report usage. */
  usage?: Usage;
}
