/**
 * The parts of the Anthropic Messages API wire format this adapter writes and reads.
 * https://docs.anthropic.com/en/api/messages
 */

export type AnthropicImageSource = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };

/** Anthropic's cache breakpoint, e.g. `{type: 'ephemeral', ttl: '1h'}`, passed through as the client sent it. */
export type AnthropicCacheControl = Record<string, unknown>;

export type AnthropicTextBlock = { type: 'text'; text: string; cache_control?: AnthropicCacheControl };
export type AnthropicImageBlock = { type: 'image'; source: AnthropicImageSource; cache_control?: AnthropicCacheControl };

export type AnthropicRequestBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown>; cache_control?: AnthropicCacheControl }
  | {
      type: 'tool_result';
      tool_use_id: string;
      content?: string | Array<AnthropicTextBlock | AnthropicImageBlock>;
      is_error?: boolean;
      cache_control?: AnthropicCacheControl;
    };

export interface AnthropicRequestMessage {
  role: 'user' | 'assistant';
  content: AnthropicRequestBlock[];
}

/** A client tool (with input_schema) or one of Anthropic's own tools (with a `type`), plus any fields the client sent. */
export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema?: Record<string, unknown>;
  cache_control?: AnthropicCacheControl;
  [extra: string]: unknown;
}

export type AnthropicToolChoice =
  | { type: 'auto' | 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export interface AnthropicMessagesBody {
  model: string;
  max_tokens: number;
  messages: AnthropicRequestMessage[];
  system?: string | AnthropicTextBlock[];
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  thinking?: { type: 'enabled'; budget_tokens: number };
  stream?: boolean;
  /** Fields the client sent that the gateway does not know, forwarded as they came. */
  [extra: string]: unknown;
}

/** Usage as Anthropic reports it; input_tokens excludes the cache reads and writes. */
export interface AnthropicUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/** A parsed stream event; fields beyond `type` are checked where they are read. */
export interface AnthropicStreamEvent {
  type: string;
  [field: string]: unknown;
}

/** The wire data is untyped JSON; this guard is how the converters look inside it. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
