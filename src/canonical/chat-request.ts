/** The one request shape every wire format is translated into and every provider adapter consumes. */

export type ReasoningEffort = 'low' | 'medium' | 'xhigh';

/**
 * A provider's cache breakpoint as the client sent it (Anthropic `cache_control`), kept opaque
 * so it reaches a provider that understands it unchanged; other providers ignore it.
 */
export type CacheControl = Record<string, unknown>;

/**
 * What only one format's providers understand, on a message, a part or a tool, keyed by that
 * format (in the spirit of vercel/ai's providerOptions): other providers never look at it.
 */
export interface PartOptions {
  anthropic?: { cacheControl?: CacheControl };
}

/** The same for the whole request. */
export interface RequestOptions {
  anthropic?: {
    /** Beta features the client enabled (the anthropic-beta header). */
    betas?: string[];
    /** The API version the client asked for (the anthropic-version header). */
    version?: string;
    /** A thinking budget the client set itself (budget_tokens); used over the reasoning level's. */
    thinkingBudgetTokens?: number;
  };
  openai?: {
    /** Headers of the client's own to send as they are (Codex's turn state and metadata). */
    headers?: Record<string, string>;
  };
}

export interface TextPart {
  type: 'text';
  text: string;
  providerOptions?: PartOptions;
}

export interface ImagePart {
  type: 'image';
  /** http(s) URL or data: URL. */
  url: string;
  detail?: 'auto' | 'low' | 'high';
  providerOptions?: PartOptions;
}

export type ContentPart = TextPart | ImagePart;

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text exactly as the model produced it (may be partial-looking but is complete here). */
  arguments: string;
}

/**
 * What Anthropic attaches to a reasoning block: its signature over the text, which it needs back
 * unchanged; or, for a block it hands out only encrypted (redacted thinking), that data, and the
 * block has no text.
 */
export interface AnthropicReasoning {
  signature?: string;
  redactedData?: string;
}

/** What only one format's providers understand on a reasoning block, keyed like PartOptions. */
export interface ReasoningOptions {
  anthropic?: AnthropicReasoning;
}

/**
 * Reasoning a model produced in an earlier turn, as the client sent it back: the readable text
 * (empty for a block its provider hid), with what its provider attached to it as options.
 */
export interface ReasoningBlock {
  text: string;
  providerOptions?: ReasoningOptions;
}

export type ChatMessage =
  | { role: 'system' | 'developer'; content: string; providerOptions?: PartOptions }
  | { role: 'user'; content: ContentPart[] }
  | {
      role: 'assistant';
      content: string | null;
      toolCalls?: ToolCall[];
      /** Reasoning that came before the answer, in order. */
      reasoning?: ReasoningBlock[];
      /** Cache breakpoint on the last block of the turn. */
      providerOptions?: PartOptions;
    }
  | {
      role: 'tool';
      toolCallId: string;
      /** Text, or text and images when the tool returned images. */
      content: string | ContentPart[];
      /** The tool reported a failure. */
      isError?: boolean;
      providerOptions?: PartOptions;
    };

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments; absent for a provider's built-in tools. */
  parameters?: Record<string, unknown>;
  /** OpenAI structured-outputs flag, kept for providers that understand it. */
  strict?: boolean;
  providerOptions?: PartOptions;
  /**
   * Other fields of the tool as the client sent them (e.g. Anthropic `defer_loading`, or `type`
   * of a provider's built-in tool), for a provider of the client's own format.
   */
  extra?: Record<string, unknown>;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

/**
 * Structured output the client asked for: OpenAI `response_format`, Responses `text.format`,
 * Anthropic `output_config.format`. Each provider sends it its own way.
 */
export type ResponseFormat =
  { type: 'json_object' } | { type: 'json_schema'; name: string; schema: Record<string, unknown>; description?: string; strict?: boolean };

/** The wire formats pass-through fields can come in: OpenAI's (chat completions, Responses) and Anthropic's. */
export type PassThroughFormat = 'openai' | 'anthropic';

/**
 * Fields the gateway does not read, tagged by the wire format they came in (in the spirit of
 * vercel/ai's provider options keyed by provider): a provider of the same format gets them as
 * sent; a provider of the other format gets the few that mean something there, translated, and
 * the rest are dropped with a warning on the receipt.
 */
export interface PassThrough {
  format: PassThroughFormat;
  fields: Record<string, unknown>;
}

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  /** Upper bound on output tokens asked by the client (max_tokens / max_completion_tokens). */
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  stop?: string[];
  /** Asked by the client; when absent the alias default applies; 'none' turns reasoning off. */
  reasoningEffort?: ReasoningEffort | 'none';
  responseFormat?: ResponseFormat;
  passThrough: PassThrough;
  providerOptions?: RequestOptions;
}

/** The text of a tool result, its images left out. */
export function toolResultText(content: string | ContentPart[]): string {
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}
