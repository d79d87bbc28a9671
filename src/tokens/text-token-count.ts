import { ThreadJobs, threadEntry } from '../lib/thread-jobs.ts';
import { nextSlice, sliceSpent } from '../lib/turn-slices.ts';

/**
 * How many cl100k tokens a text is, bounded in time and never holding the event loop.
 *
 * Three answers of growing cost:
 * - `utf8Bytes`: a strict upper bound. A byte-level BPE token covers at least one byte, so no
 *   such tokenizer (cl100k, o200k, Claude's) makes more tokens than the text has bytes.
 * - `tokenFloor`: a lower bound, in one pass over the bytes, from the longest cl100k token
 *   holding each pair of adjacent bytes and each run of 8 whitespace bytes.
 * - `countTexts`: the count itself. Long texts are cut into chunks (at word boundaries,
 *   which keeps the count exact, or every `HARD_CUT` characters inside a run with no boundary,
 *   which bounds the tokenizer's merge step: it grows quadratically with a run's length), and
 *   the chunks are counted on a thread of their own, which loads an encoding's ranks (packed-ranks.mjs;
 *   cl100k's or o200k's, each once a count needs it: 21 or 26 MiB with the thread) on the first count, not at start.
 *
 * What stays on the event loop (weighing bytes, cutting chunks) runs in slices (turn-slices.ts).
 */

import { tokenFloor, whitespaceRunTokens } from './token-bounds.ts';

export { MEASURE_SLICE, tokenFloor, tokenFloors, utf8Bytes, utf8BytesInSlices, type TextFloors } from './token-bounds.ts';

/**
 * cl100k tokens of each chunk are counted on a thread of its own: loading the tables would hold
 * the event loop for 100-200 ms, and counting a long prompt for longer.
 */
const counting = new ThreadJobs<{ id: number; counts: number[] }>(
  threadEntry('cl100k-counter-thread', import.meta.url),
  'token-counting',
  // Its tables go back a minute after the last count; loading them again takes ~0.15-0.2 s, off the event loop.
  60_000,
  // A young generation of 2 MiB, not the default that grows to 16: measured on 2 MB of English in
  // 4 KB chunks, the thread then held 35 MiB instead of 65 and counted in 170 ms instead of 400.
  { resourceLimits: { maxYoungGenerationSizeMb: 2 } },
);

/** The tokenizers the gateway counts with: cl100k_base for its bounds, o200k_base for OpenAI's current models. */
export type Encoding = 'cl100k_base' | 'o200k_base';

async function countOnThread(chunks: string[], encoding: Encoding): Promise<number[]> {
  const { id, reply } = counting.open();
  counting.post(encoding === 'cl100k_base' ? { id, chunks } : { id, chunks, encoding });
  return (await reply).counts;
}

/**
 * Starts the counting thread if it is not running, so that it loads its tables ahead of a count
 * that is likely to come (once a body of megabytes was answered: parse-json-body.ts
 * `warmCountingAfter`): the next such prompt may wait for it, so the thread starts as one a
 * request waits for (thread-jobs.ts `startThread`).
 */
export function startCounting(): void {
  counting.start(true);
  counting.post({ warm: true });
}

/** Whether the counting thread is running. */
export const countingStarted = (): boolean => counting.started;

/** Longest run the tokenizer gets without a word boundary. */
const HARD_CUT = 128;
/** Longest chunk cut at a word boundary. */
const SOFT_CUT = 4096;

const isSpace = (code: number) => code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;

/** Whether cl100k's pre-tokenizer splits between these two characters: a space after a non-space, a non-space after a newline. */
const splitsBetween = (previous: number, code: number) => (code === 0x20 && !isSpace(previous)) || (previous === 0x0a && !isSpace(code));

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
    if (splitsBetween(previous, code)) boundary = index;
    if (index - Math.max(start, boundary) >= HARD_CUT) {
      // A run without a boundary: cut here, or one earlier rather than split a surrogate pair.
      const cut = previous >= 0xd800 && previous <= 0xdbff ? index - 1 : index;
      const chunk = text.slice(start, cut);
      yield chunk;
      start = boundary = cut;
      // The same HARD_CUT characters again (5 MiB of one character), not followed by a split, are
      // what the scan would cut next: its pairs are the chunk's, checked already. Not scanned again.
      // Compared as a slice: on a prompt of megabytes (an external string) startsWith took 20 ms
      // for 5 MiB of 128-character chunks, a slice and === 5 ms.
      if (chunk.length === HARD_CUT) {
        while (
          start + HARD_CUT < text.length &&
          text.slice(start, start + HARD_CUT) === chunk &&
          !splitsBetween(chunk.charCodeAt(HARD_CUT - 1), text.charCodeAt(start + HARD_CUT))
        ) {
          yield chunk;
          start = boundary = index = start + HARD_CUT;
        }
      }
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

/** The same for o200k counts, which only prompts for OpenAI's current models need. */
export const o200kTokenCache = new TextTokenCache(10_000_000, 64);

const cacheOf = (encoding: Encoding) => (encoding === 'cl100k_base' ? textTokenCache : o200kTokenCache);

/** Characters given to the tokenizer so far; tests read it to see cache hits. */
export const tokenizerWork = { characters: 0 };

export interface TextCount {
  /** Tokens counted; when not `complete`, a lower bound of the texts' count. */
  tokens: number;
  complete: boolean;
}

/**
 * cl100k tokens (or `encoding`'s) of `texts` together. With `stopAbove` (cl100k only), stops as soon as the count so far plus the
 * lower bound of what is left passes it (the answer is then only known to be above it);
 * `floors` are the texts' `tokenFloors` when the caller has them. Chunks are counted apart, so
 * the floors of the chunks counted can be taken off the texts' floor: what is left stays a lower
 * bound of the rest (a text's floor is at most the sum of its chunks' floors).
 */
export async function countTexts(
  texts: readonly string[],
  stopAbove = Infinity,
  floors?: readonly number[],
  encoding: Encoding = 'cl100k_base',
): Promise<TextCount> {
  const stops = stopAbove !== Infinity;
  const cache = cacheOf(encoding);
  // The cut points and whitespace runs are cl100k's; o200k's pre-tokenizer splits at the same places.
  const runTokens = encoding === 'cl100k_base' ? whitespaceRunTokens : () => undefined;
  let tokens = 0;
  // The same chunk again (a long run of one character) is counted and weighed once.
  const repeated = new Map<string, { count: number; floor: number }>();
  let floorLeft = 0;
  if (stops) for (const [index, text] of texts.entries()) floorLeft += floors?.[index] ?? tokenFloor(text);
  for (const [index, text] of texts.entries()) {
    const cached = cache.get(text);
    if (cached !== undefined) {
      tokens += cached;
      if (stops) floorLeft -= floors?.[index] ?? tokenFloor(text);
      continue;
    }
    let textTokens = 0;
    const chunks = countingChunks(text);
    for (let batch = nextBatch(chunks); batch.length > 0; batch = nextBatch(chunks)) {
      const counts = new Map<string, { count: number; floor: number }>();
      const fresh = [...new Set(batch.filter((chunk) => !repeated.has(chunk)))];
      // Runs of one whitespace character are counted without the tokenizer (whitespaceRunTokens).
      const runs = fresh.map(runTokens);
      const tokenized = fresh.filter((_, at) => runs[at] === undefined);
      const tokenizedCounts = tokenized.length > 0 ? await countOnThread(tokenized, encoding) : [];
      let next = 0;
      fresh.forEach((chunk, at) => {
        let count = runs[at];
        if (count === undefined) {
          count = tokenizedCounts[next++]!;
          tokenizerWork.characters += chunk.length;
        }
        const seen = { count, floor: stops ? tokenFloor(chunk) : 0 };
        counts.set(chunk, seen);
        if (chunk.length >= HARD_CUT) repeated.set(chunk, seen);
      });
      for (const chunk of batch) {
        const seen = counts.get(chunk) ?? repeated.get(chunk)!;
        textTokens += seen.count;
        floorLeft -= seen.floor;
      }
      const atLeast = tokens + textTokens + Math.max(0, floorLeft);
      if (atLeast > stopAbove) return { tokens: atLeast, complete: false };
      // Batches of repeated chunks need no thread: give the event loop back between them too.
      if (sliceSpent()) await nextSlice();
    }
    cache.remember(text, textTokens);
    tokens += textTokens;
  }
  return { tokens, complete: true };
}

/** Characters of chunks sent to the counting thread at once: a count that passes its limit stops soon after. */
const BATCH_CHARACTERS = 64 * 1024;

function nextBatch(chunks: Iterator<string>): string[] {
  const batch: string[] = [];
  for (let characters = 0; characters < BATCH_CHARACTERS;) {
    const next = chunks.next();
    if (next.done) break;
    batch.push(next.value);
    characters += next.value.length;
  }
  return batch;
}

/** cl100k tokens of one text, without margin: a fair count, e.g. of output already forwarded. */
export async function countTextTokens(text: string): Promise<number> {
  return (await countTexts([text])).tokens;
}
