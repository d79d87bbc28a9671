import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import type { ChatRequest, ContentPart } from './chat-request.ts';

/**
 * Token counts the gateway makes itself: the input upper bound a hold is based on, and a fair
 * count of output forwarded before a stream was cut short.
 *
 * Counts use cl100k_base. It is less efficient than o200k_base (OpenAI's current models) on
 * non-Latin text and close to it on English and code, so it is the safer base for OpenAI; the
 * margin covers Claude's own tokenizer, which is not public and counts somewhat above cl100k.
 */

/** Multiplier over cl100k counts of the input text, tool schemas and tool calls. */
export const INPUT_MARGIN = 1.35;
/** Chat-format priming of a request (OpenAI counts 3). */
const REQUEST_OVERHEAD = 8;
/** Role and separator tokens around each message (OpenAI counts 3). */
const PER_MESSAGE_OVERHEAD = 4;
/** Tool-use system prompt the provider injects when tools are present (Anthropic: a few hundred). */
export const TOOL_USE_OVERHEAD = 500;
/** Framing of each tool definition, beyond the JSON of its name, description and parameters. */
const PER_TOOL_OVERHEAD = 8;
/** Framing of each tool call in an assistant message (id, type, separators). */
const PER_TOOL_CALL_OVERHEAD = 8;

// Text that looks like a special token (`<|endoftext|>`) is ordinary text in a prompt: count it
// as such instead of throwing, as the providers do.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

function tokenize(text: string): number {
  return countTokens(text, PLAIN_TEXT);
}

/**
 * LRU of token counts keyed by the text itself. Agents resend the whole conversation every turn
 * (100K tokens, ~400 KB), and tokenizing that costs ~15 ms; with the cache, a repeated message
 * costs a map lookup. Texts shorter than `minLength` are counted directly: the lookup would save
 * little and the entry would cost more memory than the text.
 */
export class TextTokenCache {
  private readonly entries = new Map<string, number>();
  private cachedCharacters = 0;
  /** Characters given to the tokenizer so far; tests read it to see hits. */
  tokenizedCharacters = 0;

  constructor(
    /** Budget of the cache: key characters plus `ENTRY_OVERHEAD` per entry (~1-2 bytes per character). */
    private readonly maxCharacters: number,
    private readonly minLength: number,
  ) {}

  /** Rough memory of a Map entry beyond its key, in characters. */
  static readonly ENTRY_OVERHEAD = 64;

  count(text: string): number {
    if (text.length === 0) return 0;
    if (text.length < this.minLength) return this.tokenizeCounted(text);
    const hit = this.entries.get(text);
    if (hit !== undefined) {
      // Re-inserting moves the entry to the newest end of the Map's insertion order.
      this.entries.delete(text);
      this.entries.set(text, hit);
      return hit;
    }
    const tokens = this.tokenizeCounted(text);
    this.remember(text, tokens);
    return tokens;
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
    this.cachedCharacters = 0;
    this.tokenizedCharacters = 0;
  }

  private tokenizeCounted(text: string): number {
    this.tokenizedCharacters += text.length;
    return tokenize(text);
  }

  private remember(text: string, tokens: number): void {
    const cost = text.length + TextTokenCache.ENTRY_OVERHEAD;
    if (cost > this.maxCharacters) return;
    this.entries.set(text, tokens);
    this.cachedCharacters += cost;
    for (const oldest of this.entries.keys()) {
      if (this.cachedCharacters <= this.maxCharacters) break;
      this.entries.delete(oldest);
      this.cachedCharacters -= oldest.length + TextTokenCache.ENTRY_OVERHEAD;
    }
  }
}

/** The process-wide cache: 25M characters is at most ~50 MB of strings. */
export const textTokenCache = new TextTokenCache(25_000_000, 64);

/** cl100k tokens of `text`, without margin: a fair count, e.g. of output already forwarded. */
export function estimateTextTokens(text: string): number {
  return textTokenCache.count(text);
}

/** What an input estimate is made of, before the margin and the model's image size apply. */
interface InputMeasure {
  /** cl100k tokens of message text, tool calls, tool results, tool schemas. */
  textTokens: number;
  /** Framing tokens, counted exactly (no margin). */
  framingTokens: number;
  images: number;
}

function measureParts(measure: InputMeasure, parts: ContentPart[]): void {
  for (const part of parts) {
    if (part.type === 'text') measure.textTokens += estimateTextTokens(part.text);
    else measure.images++;
  }
}

function measureInput(request: ChatRequest): InputMeasure {
  const measure: InputMeasure = { textTokens: 0, framingTokens: REQUEST_OVERHEAD, images: 0 };
  for (const message of request.messages) {
    measure.framingTokens += PER_MESSAGE_OVERHEAD;
    switch (message.role) {
      case 'user':
        measureParts(measure, message.content);
        break;
      case 'tool':
        if (typeof message.content === 'string') measure.textTokens += estimateTextTokens(message.content);
        else measureParts(measure, message.content);
        break;
      case 'assistant':
        measure.textTokens += estimateTextTokens(message.content ?? '');
        // Signed reasoning sent back is prompt again (redacted blocks carry no countable text).
        for (const block of message.reasoning ?? []) if ('text' in block) measure.textTokens += estimateTextTokens(block.text);
        for (const call of message.toolCalls ?? []) {
          measure.textTokens += estimateTextTokens(call.name) + estimateTextTokens(call.arguments);
          measure.framingTokens += PER_TOOL_CALL_OVERHEAD;
        }
        break;
      default:
        measure.textTokens += estimateTextTokens(message.content);
    }
  }
  const tools = request.tools ?? [];
  if (tools.length > 0) measure.framingTokens += TOOL_USE_OVERHEAD;
  for (const tool of tools) {
    const schema = { name: tool.name, description: tool.description, parameters: tool.parameters };
    measure.textTokens += estimateTextTokens(JSON.stringify(schema));
    measure.framingTokens += PER_TOOL_OVERHEAD;
  }
  // Providers count a structured-output schema as prompt tokens (Anthropic's forced tool too).
  if (request.responseFormat?.type === 'json_schema') {
    measure.textTokens += estimateTextTokens(JSON.stringify(request.responseFormat.schema));
    measure.framingTokens += TOOL_USE_OVERHEAD;
  }
  return measure;
}

/** What a count needs to know of the model (a configured model fits): its image size. */
export interface TokenCountingModel {
  maxImageTokens: number;
}

// A request is estimated once per candidate, by routing and again by the hold; the measure does
// not depend on the model, and a canonical request is not changed after parsing.
const measured = new WeakMap<ChatRequest, InputMeasure>();

function measureOnce(request: ChatRequest): InputMeasure {
  let measure = measured.get(request);
  if (!measure) {
    measure = measureInput(request);
    measured.set(request, measure);
  }
  return measure;
}

/**
 * Upper bound of the prompt tokens `model` will report for `request`: cl100k counts times
 * INPUT_MARGIN, framing per request, message, tool and tool call, the tool-use prompt when
 * tools are present, and every image at the model's per-image maximum.
 */
export function estimateInputTokens(request: ChatRequest, model: TokenCountingModel): number {
  const { textTokens, framingTokens, images } = measureOnce(request);
  return Math.ceil(textTokens * INPUT_MARGIN) + framingTokens + images * model.maxImageTokens;
}

/**
 * A fair count of the prompt, without the safety margin: what a cut-short request is billed
 * for when the provider never reported usage, and what the context-window check uses.
 */
export function countInputTokens(request: ChatRequest, model: TokenCountingModel): number {
  const { textTokens, framingTokens, images } = measureOnce(request);
  return textTokens + framingTokens + images * model.maxImageTokens;
}
