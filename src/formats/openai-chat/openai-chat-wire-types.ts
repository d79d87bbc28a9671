/**
 * The parts of the OpenAI chat-completions answer this adapter reads, as OpenAI and the
 * servers that copy it (vLLM, Ollama, Groq, DeepSeek, OpenRouter, Mistral...) send them.
 * Every field is optional: compatible servers leave out what OpenAI always sends.
 * https://platform.openai.com/docs/api-reference/chat/object
 */

/** A content part of Mistral's structured answers: text, or a thinking block holding text parts. */
export interface OpenAIContentPart {
  type?: string;
  text?: string;
  thinking?: OpenAIContentPart[] | string;
}

/** Where a message or delta keeps its text: a string, null, or Mistral's array of parts. */
export type OpenAIContent = string | null | OpenAIContentPart[];

export interface OpenAIToolCall {
  /** Required by OpenAI in stream deltas; Gemini's compatible endpoint leaves it out. */
  index?: number;
  id?: string | null;
  type?: string;
  function?: { name?: string | null; arguments?: string | null };
}

/** A message (non-streaming) or a delta (streaming); both carry the same fields. */
export interface OpenAIMessage {
  role?: string;
  content?: OpenAIContent;
  /** DeepSeek, vLLM before 0.10, xAI. */
  reasoning_content?: string | null;
  /** OpenRouter, Ollama, vLLM 0.10 and later. */
  reasoning?: string | null;
  tool_calls?: OpenAIToolCall[] | null;
}

export interface OpenAIChoice {
  index?: number;
  message?: OpenAIMessage;
  delta?: OpenAIMessage;
  finish_reason?: string | null;
}

export interface OpenAIUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
  /** DeepSeek's cache counters, older than its prompt_tokens_details. */
  prompt_cache_hit_tokens?: number;
}

/** The error object of an error body or of an error event in a stream; TGI sends a bare string. */
export type OpenAIErrorPayload = { message?: unknown; type?: unknown; code?: unknown } | string;

/** A chat.completion object or one chat.completion.chunk. */
export interface OpenAIChatCompletion {
  object?: string;
  choices?: OpenAIChoice[];
  usage?: OpenAIUsage | null;
  /** Groq reports stream usage here instead of in `usage`. */
  x_groq?: { usage?: OpenAIUsage | null } | null;
  /** OpenRouter, vLLM and llama.cpp report failures inside a 200 answer. */
  error?: OpenAIErrorPayload | null;
}

/** The wire data is untyped JSON; this guard is how the converters look inside it. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
