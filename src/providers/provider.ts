import type { ChatRequest, PassThroughFormat, ReasoningEffort } from '../canonical/chat-request.ts';
import type { ChatResult, Usage } from '../canonical/chat-result.ts';
import type { StreamPart } from '../canonical/stream-part.ts';
import type { ModelConfig } from '../config/schema.ts';

/** One call to one model: the canonical request plus what routing decided for that model. */
export interface ProviderCall {
  request: ChatRequest;
  model: ModelConfig;
  /** Effective reasoning level, already dropped (undefined) for models without reasoning. */
  reasoningEffort?: ReasoningEffort;
  /** Output token cap to send upstream. */
  maxOutputTokens: number;
  signal: AbortSignal;
  /** Whether the gateway may place prompt-cache breakpoints itself (the alias's and key's setting). */
  automaticCaching?: boolean;
  /**
   * A stable name of the key's conversation, for providers that route by a cache key (set with
   * automaticCaching): made when first asked for (a hash of the conversation's opening), so a
   * provider that takes no key costs nothing.
   */
  promptCacheKey?: () => string;
  /** Told of every client setting the provider cannot honour (a field dropped in translation), for the receipt. */
  warn?: (message: string) => void;
  /** Streams: told the provider's prompt count when it gives one before the content (Anthropic's message_start). */
  onInputUsage?: (usage: Usage) => void;
  /** The client's own JSON text of long strings of the request, to write upstream as they are (json-pieces.ts). */
  jsonTexts?: ReadonlyMap<string, Uint8Array>;
  /**
   * Streams of a client speaking `format`: a provider of that same format may relay its events
   * (`relayed` parts) instead of turning each into parts to be encoded again. An OpenAI relay's
   * `head` opens every chunk the gateway writes (its id, created and model, up to "choices").
   */
  relay?: StreamRelay;
  /** The call's trace context (`traceparent`), sent upstream beside the provider's own headers when tracing is on. */
  traceHeaders?: Record<string, string>;
}

export type StreamRelay = { format: 'openai'; head: string } | { format: Exclude<PassThroughFormat, 'openai'> };

/**
 * The whole provider contract. Failures are thrown as ProviderError. A stream must throw
 * before yielding its first part when the provider fails before answering, so the router
 * can fall back; a failure after the first part is thrown from the iterator.
 */
export interface ProviderAdapter {
  generate(call: ProviderCall): Promise<ChatResult>;
  stream(call: ProviderCall): AsyncIterable<StreamPart>;
  close(): Promise<void>;
}
