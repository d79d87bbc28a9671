import type { ReasoningBlock, ToolCall } from './chat-request.ts';

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

export interface ChatResult {
  content: string;
  /** All reasoning text, joined. */
  reasoning?: string;
  /** The same reasoning as the provider's blocks, with signatures, when it signs them. */
  reasoningBlocks?: ReasoningBlock[];
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  /** The client's stop sequence that ended the answer, when the provider says which. */
  stopSequence?: string;
  /** Absent when the provider did not report usage. */
  usage?: Usage;
}
