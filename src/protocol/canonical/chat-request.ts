/** The one request shape every wire format is translated into and every provider adapter consumes. */

export type ReasoningEffort = 'low' | 'medium' | 'xhigh';

export interface TextPart {
  type: 'text';
  text: string;
}

export interface ImagePart {
  type: 'image';
  /** http(s) URL or data: URL. */
  url: string;
  detail?: 'auto' | 'low' | 'high';
}

export type ContentPart = TextPart | ImagePart;

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text exactly as the model produced it (may be partial-looking but is complete here). */
  arguments: string;
}

export type ChatMessage =
  | { role: 'system' | 'developer'; content: string }
  | { role: 'user'; content: ContentPart[] }
  | { role: 'assistant'; content: string | null; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string };

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments. */
  parameters?: Record<string, unknown>;
  /** OpenAI structured-outputs flag, kept for providers that understand it. */
  strict?: boolean;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

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
  /** Asked by the client; when absent the alias default applies. */
  reasoningEffort?: ReasoningEffort;
  /** Fields the gateway does not know, forwarded to the provider unchanged. */
  extra: Record<string, unknown>;
}
