import { countTexts, MEASURE_SLICE, tokenFloors, utf8Bytes, utf8BytesInSlices, type Encoding } from './text-token-count.ts';
import { toolResultText, type ChatRequest, type ContentPart } from '../canonical/chat-request.ts';
import { openAIChatPieces, openAIEncodingFor, type CountedMessage } from './openai-chat-count.ts';

/**
 * Token counts the gateway makes itself: the input upper bound a hold is based on, and a fair
 * count of output forwarded before a stream was cut short.
 *
 * Bounds use cl100k_base. It is less efficient than o200k_base (OpenAI's current models) on
 * non-Latin text and close to it on English and code, so it is the safer base for OpenAI; the
 * margin covers Claude's own tokenizer, which is not public and counts somewhat above cl100k.
 * For a model whose tokenizer is known (OpenAI's, by name: openai-chat-count.ts), the fair count is
 * that tokenizer's with the chat format's framing, what the provider reports for text and tool
 * prompts, and once made it bounds the hold too, with a small margin.
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
/** Multiplier over an exact count in a hold: for tool calls and schemas, which the cookbook's recipe does not cover. */
export const EXACT_MARGIN = 1.05;
/** Least share of cl100k's floor a model's own tokenizer may count: o200k takes about 0.6 of cl100k's tokens on the least English of texts. */
const OWN_TOKENIZER_FLOOR = 0.5;

/** What an input estimate is made of, before the margin and the model's image size apply. */
interface InputMeasure {
  /** Message text, tool calls, tool results, tool schemas: what the tokenizer counts. */
  texts: string[];
  /** UTF-8 bytes of `texts`: an upper bound of their tokens. */
  textBytes: number;
  /** cl100k tokens of `texts`, once counted. */
  textTokens?: number;
  /** `tokenFloors` of `texts`, once weighed in full. */
  textFloors?: number[];
  /** A lower bound of `textTokens`, once needed. */
  textFloor?: number;
  /** Framing tokens, counted exactly (no margin). */
  framingTokens: number;
  images: number;
}

function collectInput(request: ChatRequest): Omit<InputMeasure, 'textBytes'> {
  const texts: string[] = [];
  let framingTokens = REQUEST_OVERHEAD;
  let images = 0;
  const addParts = (parts: ContentPart[]) => {
    for (const part of parts) {
      if (part.type === 'text') texts.push(part.text);
      else images++;
    }
  };
  for (const message of request.messages) {
    framingTokens += PER_MESSAGE_OVERHEAD;
    switch (message.role) {
      case 'user':
        addParts(message.content);
        break;
      case 'tool':
        if (typeof message.content === 'string') texts.push(message.content);
        else addParts(message.content);
        break;
      case 'assistant':
        texts.push(message.content ?? '');
        // Signed reasoning sent back is prompt again (redacted blocks carry no countable text).
        for (const block of message.reasoning ?? []) texts.push(block.text);
        for (const call of message.toolCalls ?? []) {
          texts.push(call.name, call.arguments);
          framingTokens += PER_TOOL_CALL_OVERHEAD;
        }
        break;
      default:
        texts.push(message.content);
    }
  }
  const tools = request.tools ?? [];
  if (tools.length > 0) framingTokens += TOOL_USE_OVERHEAD;
  for (const tool of tools) {
    texts.push(JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters }));
    framingTokens += PER_TOOL_OVERHEAD;
  }
  // Providers count a structured-output schema as prompt tokens (Anthropic's forced tool too).
  if (request.responseFormat?.type === 'json_schema') {
    texts.push(JSON.stringify(request.responseFormat.schema));
    framingTokens += TOOL_USE_OVERHEAD;
  }
  return { texts, framingTokens, images };
}

/** What a count needs to know of the model (a configured model fits): its image size, and its name for its tokenizer. */
export interface TokenCountingModel {
  maxImageTokens: number;
  upstream?: string;
}

const encodingOf = (model: TokenCountingModel): Encoding | undefined =>
  model.upstream === undefined ? undefined : openAIEncodingFor(model.upstream);

/** The request as OpenAI's chat format counts it (what convert-to-openai-request.ts sends). */
function chatPieces(request: ChatRequest, encoding: Encoding): { texts: string[]; framing: number; images: number } {
  let images = 0;
  const partTexts = (parts: ContentPart[]) =>
    parts.flatMap((part) => {
      if (part.type === 'text') return [part.text];
      images++;
      return [];
    });
  const messages: CountedMessage[] = request.messages.map((message) => {
    switch (message.role) {
      case 'user':
        return { role: 'user', content: partTexts(message.content) };
      case 'tool':
        if (typeof message.content !== 'string') images += message.content.filter((part) => part.type === 'image').length;
        return { role: 'tool', content: [toolResultText(message.content)] };
      case 'assistant':
        return { role: 'assistant', content: [message.content ?? '', ...(message.toolCalls ?? []).flatMap((call) => [call.name, call.arguments])] };
      default:
        return { role: message.role, content: [message.content] };
    }
  });
  // Function tools only, as they are sent (a provider's built-in tools are dropped).
  const tools = (request.tools ?? []).filter(
    (tool) => tool.extra?.type === undefined || tool.extra.type === 'custom' || tool.extra.type === 'function',
  );
  const pieces = openAIChatPieces(messages, tools, encoding);
  if (request.responseFormat?.type === 'json_schema') pieces.texts.push(JSON.stringify(request.responseFormat.schema));
  return { ...pieces, images };
}

/**
 * The prompt of one request, measured once and passed down to whoever needs its size (routing's
 * context filter, the worst case, usage estimates, Anthropic's message_start). The measure does
 * not depend on the model, and a canonical request is not changed after parsing, so every count
 * and bound made here is kept for the next caller.
 */
export class PromptMeasure {
  private measure: InputMeasure | undefined;
  /** Exact counts per tokenizer, without images (the chat format's framing included). */
  private readonly exact = new Map<Encoding, { tokens: number; images: number }>();

  constructor(readonly request: ChatRequest) {}

  /**
   * Upper bound of the prompt tokens `model` will report, from what is known now: the text's UTF-8
   * bytes until it was counted, then the smaller of those bytes and its cl100k count times
   * INPUT_MARGIN; plus framing per request, message, tool and tool call, the tool-use prompt when
   * tools are present, and every image at the model's per-image maximum. Cheap: it never runs the
   * tokenizer, so a hold is placed on it first and the prompt is counted only when that hold does
   * not fit (`count`, then this again: see reserveWorstCase).
   */
  ceiling(model: TokenCountingModel): number {
    const measure = this.measured();
    const text = measure.textTokens === undefined ? measure.textBytes : Math.min(measure.textBytes, Math.ceil(measure.textTokens * INPUT_MARGIN));
    const bound = text + fixedTokens(measure, model);
    const encoding = encodingOf(model);
    const exact = encoding && this.exact.get(encoding);
    return exact ? Math.min(bound, Math.ceil(exact.tokens * EXACT_MARGIN) + exact.images * model.maxImageTokens) : bound;
  }

  /**
   * The least `ceiling` can be once the prompt is counted: its floor in place of the count (the
   * count is at least the floor). No tokenizer: one pass over the bytes at most.
   */
  async ceilingAtLeast(model: TokenCountingModel): Promise<number> {
    const measure = await this.measuredInSlices();
    if (measure.textTokens !== undefined) return this.ceiling(model);
    if (measure.textFloor === undefined) {
      const weighed = await tokenFloors(measure.texts);
      measure.textFloors = weighed.floors;
      measure.textFloor = weighed.total;
    }
    const least = Math.min(measure.textBytes, Math.ceil(measure.textFloor * INPUT_MARGIN)) + fixedTokens(measure, model);
    // A model's own tokenizer may count fewer tokens than cl100k's floor (o200k on text other than English).
    return encodingOf(model) ? Math.min(least, Math.ceil(measure.textFloor * OWN_TOKENIZER_FLOOR)) : least;
  }

  /**
   * Counts the prompt's text (in bounded slices, off the hot path's event loop turns); once. With
   * `models`, also with the tokenizer of each that has a known one, which `ceiling` then uses.
   */
  async count(models: readonly TokenCountingModel[] = []): Promise<void> {
    const measure = await this.measuredInSlices();
    if (measure.textTokens === undefined) measure.textTokens = (await countTexts(measure.texts)).tokens;
    for (const model of models) await this.exactCount(model);
  }

  /** The counted upper bound: `ceiling` after `count`. */
  async estimate(model: TokenCountingModel): Promise<number> {
    await this.count([model]);
    return this.ceiling(model);
  }

  /** The count with the model's own tokenizer and the chat format's framing, or undefined when its tokenizer is not known. */
  private async exactCount(model: TokenCountingModel): Promise<number | undefined> {
    const encoding = encodingOf(model);
    if (!encoding) return undefined;
    let exact = this.exact.get(encoding);
    if (!exact) {
      const pieces = chatPieces(this.request, encoding);
      exact = { tokens: (await countTexts(pieces.texts, Infinity, undefined, encoding)).tokens + pieces.framing, images: pieces.images };
      this.exact.set(encoding, exact);
    }
    return exact.tokens + exact.images * model.maxImageTokens;
  }

  /**
   * A fair count of the prompt, without the safety margin: what a cut-short request is billed
   * for when the provider never reported usage, and what a client is told the prompt counts
   * (message_start). With the model's own tokenizer when it is known: what the provider reports.
   */
  async fairCount(model: TokenCountingModel): Promise<number> {
    const exact = await this.exactCount(model);
    if (exact !== undefined) return exact;
    await this.count();
    const measure = this.measured();
    return measure.textTokens! + fixedTokens(measure, model);
  }

  /**
   * Whether the prompt's fair count is at most `limit` tokens. Bounds decide when they can (the
   * UTF-8 bytes fit, or a lower bound does not); the tokenizer runs only between them, and stops
   * once the count passes `limit`. A multi-megabyte prompt is decided in milliseconds either way.
   */
  async fits(model: TokenCountingModel, limit: number): Promise<InputFit> {
    const measure = await this.measuredInSlices();
    const room = limit - fixedTokens(measure, model);
    if (measure.textTokens !== undefined) return { fits: measure.textTokens <= room, tokens: measure.textTokens + limit - room, bound: false };
    if (measure.textBytes <= room) return { fits: true, tokens: measure.textBytes + limit - room, bound: true };
    // Weighed once in full; a weighing stopped past a smaller limit is only a floor, weighed again when the limit is larger.
    if (measure.textFloors === undefined && (measure.textFloor ?? 0) <= room) {
      const weighed = await tokenFloors(measure.texts, room);
      measure.textFloor = Math.max(measure.textFloor ?? 0, weighed.total);
      if (weighed.complete) measure.textFloors = weighed.floors;
    }
    if (measure.textFloor! > room) return { fits: false, tokens: measure.textFloor! + limit - room, bound: true };
    const counted = await countTexts(measure.texts, room, measure.textFloors);
    if (counted.complete) measure.textTokens = counted.tokens;
    else measure.textFloor = Math.max(measure.textFloor!, counted.tokens);
    return { fits: counted.complete && counted.tokens <= room, tokens: counted.tokens + limit - room, bound: !counted.complete };
  }

  private measured(): InputMeasure {
    if (!this.measure) {
      const collected = collectInput(this.request);
      this.measure = { ...collected, textBytes: collected.texts.reduce((sum, text) => sum + utf8Bytes(text), 0) };
    }
    return this.measure;
  }

  /** `measured`, with the bytes of a text of megabytes measured in slices of the event loop's turns. */
  private async measuredInSlices(): Promise<InputMeasure> {
    if (this.measure) return this.measure;
    const collected = collectInput(this.request);
    let textBytes = 0;
    for (const text of collected.texts) textBytes += text.length > MEASURE_SLICE ? await utf8BytesInSlices(text) : utf8Bytes(text);
    // Measured meanwhile by another caller (the slices yield): one measure per prompt.
    this.measure ??= { ...collected, textBytes };
    return this.measure;
  }
}

const fixedTokens = (measure: InputMeasure, model: TokenCountingModel) => measure.framingTokens + measure.images * model.maxImageTokens;

export interface InputFit {
  fits: boolean;
  /** The fair count when counted, else the bound that decided (`fits`: upper, else lower). */
  tokens: number;
  /** Whether `tokens` is a bound rather than a count. */
  bound: boolean;
}
