import { setImmediate as yieldToEventLoop } from 'node:timers/promises';

/**
 * How many cl100k tokens a text is, bounded in time and never holding the event loop.
 *
 * Three answers of growing cost:
 * - `utf8Bytes`: a strict upper bound. A byte-level BPE token covers at least one byte, so no
 *   such tokenizer (cl100k, o200k, Claude's) makes more tokens than the text has bytes.
 * - `tokenLowerBound`: a strict lower bound, in one pass over the bytes. cl100k's longest token
 *   holding byte b is `LONGEST_TOKEN_WITH_BYTE[b]` bytes, so every byte b is worth at least
 *   1/LONGEST[b] of a token.
 * - `countTextTokens`: the count itself. Long texts are cut into chunks (at word boundaries,
 *   which keeps the count exact, or every `HARD_CUT` characters inside a run with no boundary,
 *   which bounds the tokenizer's merge step: it grows quadratically with a run's length), and
 *   the work gives the event loop back every `SLICE_MS`.
 *
 * The tokenizer's tables (~40 MB) load on the first count, not at start.
 */

/** Upper bound of tokens of `text` for any byte-level BPE tokenizer. */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * For each byte value, the length in bytes of cl100k's longest token holding it
 * (checked against the tokenizer's ranks by text-token-count.test.ts).
 */
// prettier-ignore
const LONGEST_TOKEN_WITH_BYTE = [
  1, 1, 1, 1, 1, 1, 1, 1, 1, 28, 82, 1, 2, 26, 1, 1,
  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1, 1,
  128, 10, 34, 81, 14, 64, 8, 17, 34, 24, 97, 32, 12, 114, 65, 114,
  3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 28, 16, 17, 82, 12, 8,
  22, 42, 27, 42, 40, 30, 27, 40, 40, 42, 26, 26, 30, 42, 30, 30,
  26, 26, 34, 40, 28, 30, 40, 34, 26, 26, 26, 15, 20, 14, 5, 64,
  6, 42, 34, 30, 40, 42, 34, 42, 40, 42, 26, 42, 42, 40, 42, 42,
  30, 34, 42, 42, 42, 42, 30, 40, 30, 26, 42, 8, 77, 10, 32, 1,
  48, 21, 25, 19, 13, 14, 21, 21, 16, 18, 21, 15, 25, 15, 10, 25,
  13, 19, 14, 15, 48, 19, 21, 12, 10, 12, 9, 12, 19, 12, 12, 19,
  16, 17, 12, 10, 12, 9, 24, 14, 21, 15, 13, 15, 12, 17, 12, 15,
  25, 14, 25, 17, 14, 25, 13, 25, 21, 15, 21, 25, 17, 19, 25, 25,
  1, 1, 16, 17, 9, 10, 9, 1, 4, 2, 1, 1, 2, 1, 4, 4,
  25, 25, 1, 1, 1, 1, 1, 3, 7, 7, 3, 4, 1, 1, 1, 1,
  9, 9, 48, 21, 12, 19, 19, 19, 13, 12, 7, 10, 10, 10, 1, 13,
  7, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
];
export const LONGEST_TOKEN_TABLE: readonly number[] = LONGEST_TOKEN_WITH_BYTE;

// Integer weights (rounded down, so the sum stays a lower bound) keep the sum exact and additive:
// the floor of a text is the floor of its parts' weights added.
const WEIGHT_UNIT = 1 << 16;
const BYTE_WEIGHT = Uint32Array.from(LONGEST_TOKEN_WITH_BYTE, (longest) => Math.floor(WEIGHT_UNIT / longest));

/** Tokens a floor weight is worth. */
export const tokensOfWeight = (weight: number) => Math.floor(weight / WEIGHT_UNIT);

/** Lower bound of cl100k tokens of `text`: one linear pass, no tokenizer. */
export function tokenLowerBound(text: string): number {
  return tokensOfWeight(floorWeight(text));
}

/** The lower bound's weight, additive over the parts of a text. */
export function floorWeight(text: string): number {
  const bytes = Buffer.from(text, 'utf8');
  let weight = 0;
  for (let index = 0; index < bytes.length; index++) weight += BYTE_WEIGHT[bytes[index]!]!;
  return weight;
}

/** Characters of a text whose floor is weighed between two turns of the event loop. */
const FLOOR_SLICE = 64 * 1024;

/** `floorWeight` of each text; a long one is weighed in slices, giving the event loop back between them (5 MiB takes ~15 ms). */
export async function floorWeights(texts: readonly string[]): Promise<number[]> {
  const weights: number[] = [];
  let sliceStart = performance.now();
  for (const text of texts) {
    let weight = 0;
    for (let start = 0; start < text.length;) {
      let end = Math.min(text.length, start + FLOOR_SLICE);
      // Never between the halves of a surrogate pair: each would weigh as U+FFFD.
      const last = text.charCodeAt(end - 1);
      if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
      weight += floorWeight(start === 0 && end === text.length ? text : text.slice(start, end));
      start = end;
      if (performance.now() - sliceStart > SLICE_MS) {
        await yieldToEventLoop();
        sliceStart = performance.now();
      }
    }
    weights.push(weight);
  }
  return weights;
}

type Tokenize = (text: string) => number;
let tokenizer: Promise<Tokenize> | null = null;

function loadTokenizer(): Promise<Tokenize> {
  // Text that looks like a special token (`<|endoftext|>`) is ordinary text in a prompt: count it
  // as such instead of throwing, as the providers do.
  tokenizer ??= import('gpt-tokenizer/encoding/cl100k_base').then(({ countTokens }) => {
    const plainText = { disallowedSpecial: new Set<string>() };
    return (text: string) => countTokens(text, plainText);
  });
  return tokenizer;
}

/** Longest run the tokenizer gets without a word boundary. */
const HARD_CUT = 128;
/** Longest chunk cut at a word boundary. */
const SOFT_CUT = 4096;
/** Longest stretch of tokenizer work between two turns of the event loop. */
const SLICE_MS = 4;

const isSpace = (code: number) => code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;

/**
 * Chunks of `text` the tokenizer counts as it would count the whole: cut before a space that
 * follows a non-space, or after a newline that a non-space follows (cl100k's pre-tokenizer
 * splits there too). A run with no such place is cut every HARD_CUT characters, never inside a
 * surrogate pair; that count may be a token or so above the exact one per cut.
 */
export function* countingChunks(text: string): Generator<string> {
  if (text.length <= HARD_CUT) {
    if (text.length) yield text;
    return;
  }
  let start = 0;
  let boundary = 0;
  for (let index = 1; index < text.length; index++) {
    const code = text.charCodeAt(index);
    const previous = text.charCodeAt(index - 1);
    if ((code === 0x20 && !isSpace(previous)) || (previous === 0x0a && !isSpace(code))) boundary = index;
    if (index - Math.max(start, boundary) >= HARD_CUT) {
      // A run without a boundary: cut here, or one earlier rather than split a surrogate pair.
      const cut = previous >= 0xd800 && previous <= 0xdbff ? index - 1 : index;
      yield text.slice(start, cut);
      start = boundary = cut;
    } else if (index - start >= SOFT_CUT && boundary > start) {
      yield text.slice(start, boundary);
      start = boundary;
    }
  }
  yield text.slice(start);
}

/**
 * LRU of token counts keyed by the text itself. Agents resend the whole conversation every turn
 * (100K tokens, ~400 KB), and tokenizing that costs ~15 ms; with the cache, a repeated message
 * costs a map lookup. Texts shorter than `minLength` are not kept: the lookup would save little
 * and the entry would cost more memory than the text.
 */
export class TextTokenCache {
  private readonly entries = new Map<string, number>();
  private cachedCharacters = 0;

  constructor(
    /** Budget of the cache: key characters plus `ENTRY_OVERHEAD` per entry (~1-2 bytes per character). */
    private readonly maxCharacters: number,
    readonly minLength: number,
  ) {}

  /** Rough memory of a Map entry beyond its key, in characters. */
  static readonly ENTRY_OVERHEAD = 64;

  get(text: string): number | undefined {
    if (text.length < this.minLength) return undefined;
    const hit = this.entries.get(text);
    if (hit !== undefined) {
      // Re-inserting moves the entry to the newest end of the Map's insertion order.
      this.entries.delete(text);
      this.entries.set(text, hit);
    }
    return hit;
  }

  remember(text: string, tokens: number): void {
    const cost = text.length + TextTokenCache.ENTRY_OVERHEAD;
    if (text.length < this.minLength || cost > this.maxCharacters) return;
    this.entries.set(text, tokens);
    this.cachedCharacters += cost;
    for (const oldest of this.entries.keys()) {
      if (this.cachedCharacters <= this.maxCharacters) break;
      this.entries.delete(oldest);
      this.cachedCharacters -= oldest.length + TextTokenCache.ENTRY_OVERHEAD;
    }
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
    this.cachedCharacters = 0;
  }
}

/** The process-wide cache: 25M characters is at most ~50 MB of strings. */
export const textTokenCache = new TextTokenCache(25_000_000, 64);

/** Characters given to the tokenizer so far; tests read it to see cache hits. */
export const tokenizerWork = { characters: 0 };

export interface TextCount {
  /** Tokens counted; when not `complete`, a lower bound of the texts' count. */
  tokens: number;
  complete: boolean;
}

/**
 * cl100k tokens of `texts` together. With `stopAbove`, stops as soon as the count so far plus the
 * lower bound of what is left passes it (the answer is then only known to be above it);
 * `weights` are the texts' `floorWeight`s when the caller has them.
 */
export async function countTexts(texts: readonly string[], stopAbove = Infinity, weights?: readonly number[]): Promise<TextCount> {
  const tokenize = await loadTokenizer();
  const stops = stopAbove !== Infinity;
  let tokens = 0;
  let sliceStart = performance.now();
  // The same chunk again (a long run of one character) is counted once.
  const repeated = new Map<string, { count: number; weight: number }>();
  let weightLeft = 0;
  if (stops) for (const [index, text] of texts.entries()) weightLeft += weights?.[index] ?? floorWeight(text);
  for (const [index, text] of texts.entries()) {
    const cached = textTokenCache.get(text);
    if (cached !== undefined) {
      tokens += cached;
      if (stops) weightLeft -= weights?.[index] ?? floorWeight(text);
      continue;
    }
    let textTokens = 0;
    for (const chunk of countingChunks(text)) {
      let seen = repeated.get(chunk);
      if (seen === undefined) {
        seen = { count: tokenize(chunk), weight: stops ? floorWeight(chunk) : 0 };
        tokenizerWork.characters += chunk.length;
        if (chunk.length >= HARD_CUT) repeated.set(chunk, seen);
      }
      textTokens += seen.count;
      weightLeft -= seen.weight;
      const atLeast = tokens + textTokens + tokensOfWeight(weightLeft);
      if (atLeast > stopAbove) return { tokens: atLeast, complete: false };
      if (performance.now() - sliceStart > SLICE_MS) {
        await yieldToEventLoop();
        sliceStart = performance.now();
      }
    }
    textTokenCache.remember(text, textTokens);
    tokens += textTokens;
  }
  return { tokens, complete: true };
}

/** cl100k tokens of one text, without margin: a fair count, e.g. of output already forwarded. */
export async function countTextTokens(text: string): Promise<number> {
  return (await countTexts([text])).tokens;
}
