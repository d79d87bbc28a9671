/** What the fake upstream answers to one request, including the faults it should inject. */
export interface ScriptedReply {
  /** `Hello from <model>` when text, reasoning and toolCalls are all absent (e.g. a fault-only reply). */
  text?: string;
  /** Sent as `reasoning_content` (OpenAI format) or a thinking block (Anthropic format). */
  reasoning?: string;
  /** Anthropic thinking-block signature; a fixed fake one when absent. */
  signature?: string;
  /** Anthropic format: a redacted_thinking block with this data, after the thinking. */
  redactedThinking?: string;
  toolCalls?: ScriptedToolCall[];
  /**
   * Token counts in the gateway's canonical sense: `prompt` counts every prompt token,
   * cached and cache-written ones included; `completion` counts reasoning too. The Anthropic
   * format reports `input_tokens = prompt - cached - cacheWrite`. Missing counts are counted as
   * the format's provider counts (count-prompt-tokens.ts).
   */
  usage?: { prompt?: number; completion?: number; cached?: number; cacheWrite?: number; reasoning?: number };
  /**
   * Canonical reason (stop, length, tool_calls, content_filter), translated per format, or any
   * other string sent as is (e.g. `pause_turn`). Default: tool_calls when there are tool calls.
   */
  finishReason?: string;

  // Faults.
  /** HTTP status; 400 and above answers with an error body in the format's shape. */
  status?: number;
  /** Error body to send instead of the format's default one (objects are sent as JSON). */
  errorBody?: unknown;
  /** Extra response headers (e.g. retry-after). */
  headers?: Record<string, string>;
  /** Read the request, never answer. */
  hang?: boolean;
  /** Wait this long before sending the response headers. */
  headerDelayMs?: number;
  /**
   * Wait for this too before sending the response headers: the event a test waits on (every
   * request of a burst admitted or refused), where a delay would be a guess at how long that takes.
   */
  until?: Promise<unknown>;
  /** 200 with a body that is not JSON; in a stream, the first content event's data is not JSON. */
  malformed?: boolean;
  /** Stream: destroy the socket after this many content events. */
  dieAfterChunks?: number;
  /** Stream: send the format's in-stream error event after this many content events, then end. */
  errorAfterChunks?: number;
  /** Stream: pause between two events. */
  chunkDelayMs?: number;
  /** Stream: characters per text, reasoning or arguments piece (default 8). */
  chunkSize?: number;
  /** Anthropic stream: send `event: ping` after message_start. */
  ping?: boolean;
}

export interface ScriptedToolCall {
  /** Generated in the format's style (call_..., toolu_...) when absent. */
  id?: string;
  name: string;
  /** JSON text of the arguments. */
  arguments: string;
}

export interface ResolvedUsage {
  prompt: number;
  completion: number;
  cached: number;
  cacheWrite: number;
  reasoning: number;
}

/** A successful reply with every default filled in; what the format writers consume. */
export interface ResolvedReply {
  model: string;
  text: string;
  reasoning: string;
  signature: string;
  redactedThinking?: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  usage: ResolvedUsage;
  finishReason: string;
  chunkSize: number;
  ping: boolean;
}

const DEFAULT_CHUNK_SIZE = 8;

/** The reply used when nothing is scripted for a model. */
export function defaultReply(model: string): ScriptedReply {
  return { text: `Hello from ${model}` };
}

/** How a wire format counts the tokens a script leaves out, and makes tool-call ids in its own style. */
export interface ReplyCounting {
  newToolCallId(): string;
  countPromptTokens(body: Record<string, unknown>): number;
  countTextTokens(text: string): number;
}

/** Fills in defaults; missing token counts are counted the way the format's provider counts them. */
export function resolveReply(reply: ScriptedReply, model: string, requestBody: Record<string, unknown>, format: ReplyCounting): ResolvedReply {
  const scriptsContent = reply.text !== undefined || reply.reasoning !== undefined || reply.toolCalls !== undefined;
  const text = reply.text ?? (scriptsContent ? '' : `Hello from ${model}`);
  const reasoning = reply.reasoning ?? '';
  const toolCalls = (reply.toolCalls ?? []).map((call) => ({
    id: call.id ?? format.newToolCallId(),
    name: call.name,
    arguments: call.arguments,
  }));
  const generated = text + reasoning + toolCalls.map((call) => call.name + call.arguments).join('');
  return {
    model,
    text,
    reasoning,
    signature: reply.signature ?? 'fake-signature-EqQBCgIYAhIM',
    ...(reply.redactedThinking === undefined ? {} : { redactedThinking: reply.redactedThinking }),
    toolCalls,
    usage: {
      prompt: reply.usage?.prompt ?? format.countPromptTokens(requestBody),
      completion: reply.usage?.completion ?? Math.max(1, format.countTextTokens(generated)),
      cached: reply.usage?.cached ?? 0,
      cacheWrite: reply.usage?.cacheWrite ?? 0,
      reasoning: reply.usage?.reasoning ?? format.countTextTokens(reasoning),
    },
    finishReason: reply.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
    chunkSize: Math.max(1, reply.chunkSize ?? DEFAULT_CHUNK_SIZE),
    ping: reply.ping ?? false,
  };
}

/** Splits text into pieces of `size` code points, so no surrogate pair is cut. */
export function splitIntoPieces(text: string, size: number): string[] {
  const characters = Array.from(text);
  const pieces: string[] = [];
  for (let index = 0; index < characters.length; index += size) {
    pieces.push(characters.slice(index, index + size).join(''));
  }
  return pieces;
}
