import { inflateRawSync } from 'node:zlib';
import { sliceEnd } from '../lib/slice-end.ts';
import { ThreadJobs, threadEntry } from '../lib/thread-jobs.ts';
import { nextSlice, sliceSpent } from '../lib/turn-slices.ts';
import { CL100K_PAIR_TABLE, CL100K_WHITESPACE_RUN_COUNTS, CL100K_WHITESPACE_RUNS } from './cl100k-pair-table.ts';

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
 *   the chunks are counted on a thread of their own, which loads the tokenizer's tables (27-31 MiB
 *   with the thread, from the build's JSON; cl100k-counter-thread.mjs) on the first count, not at start.
 *
 * What stays on the event loop (weighing bytes, cutting chunks) runs in slices (turn-slices.ts).
 */

/** Upper bound of tokens of `text` for any byte-level BPE tokenizer. */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** Characters whose UTF-8 bytes are measured in one step: 5 MiB of two-byte characters took 1.5-2 ms at once. */
export const MEASURE_SLICE = 512 * 1024;

/** `utf8Bytes` of a long text, a slice of it a step (turn-slices.ts). */
export async function utf8BytesInSlices(text: string): Promise<number> {
  let bytes = 0;
  for (let start = 0; start < text.length;) {
    if (sliceSpent()) await nextSlice();
    const end = sliceEnd(text, start, MEASURE_SLICE);
    bytes += utf8Bytes(text.slice(start, end));
    start = end;
  }
  return bytes;
}

/** For byte pair a·b at a * 256 + b: cl100k's longest token holding it, in bytes (0: no token does). */
let pairTable: Uint8Array | null = null;
const longestWithPair = () => (pairTable ??= new Uint8Array(inflateRawSync(Buffer.from(CL100K_PAIR_TABLE, 'base64'))));

/** The same for runs of 8 whitespace bytes, at their base-4 code (`WHITESPACE_DIGIT`). */
let whitespaceTable: Uint8Array | null = null;
function longestWithWhitespaceRun(): Uint8Array {
  if (!whitespaceTable) {
    whitespaceTable = new Uint8Array(4 ** 8);
    for (const [code, longest] of CL100K_WHITESPACE_RUNS) whitespaceTable[code] = longest;
  }
  return whitespaceTable;
}

/** Base-4 digit of a whitespace byte (space, \n, \t, \r); -1 for any other byte. */
const WHITESPACE_DIGIT = Int8Array.from({ length: 256 }, (_, byte) => [32, 10, 9, 13].indexOf(byte));

/** Runs of each whitespace character as long as cl100k-pair-table.ts counts them, by `WHITESPACE_DIGIT`. */
const WHITESPACE_RUNS = [' ', '\n', '\t', '\r'].map((character, digit) => character.repeat(CL100K_WHITESPACE_RUN_COUNTS[digit]!.length));

/**
 * cl100k tokens of `chunk` if it is a run of one whitespace character at most 128 long (the chunks
 * `countingChunks` cuts a run of whitespace into), else undefined. A prompt of megabytes of spaces
 * fits a window only by its count (cl100k has a token of 128 spaces, so neither its bytes nor its
 * floor decide it); counted this way, it waits for no counting thread to start (~0.1-0.2 s on a
 * process's first such prompt: `bench:huge`, spaces sent first, decided in 66-87 ms, 129-229 before).
 */
function whitespaceRunTokens(chunk: string): number | undefined {
  // Past the table's runs (or empty) a chunk is no slice of them.
  const digit = WHITESPACE_DIGIT[chunk.charCodeAt(0)] ?? -1;
  if (digit < 0 || chunk !== WHITESPACE_RUNS[digit]!.slice(0, chunk.length)) return undefined;
  return CL100K_WHITESPACE_RUN_COUNTS[digit]![chunk.length - 1];
}

/**
 * Lower bound of cl100k tokens of `text`, in one linear pass without the tokenizer: the fewest
 * pieces the text can be cut into such that no piece is longer than the longest token holding
 * any of its adjacent byte pairs, or any of its runs of 8 whitespace bytes. Every token the
 * tokenizer makes is such a piece, so it makes at least that many. Cutting greedily (each piece
 * as long as it can be) gives the fewest, because a piece's sub-pieces are pieces too.
 * 5 MiB of one letter is at least 655K tokens ("aa" is in no token longer than 8 bytes), where a
 * per-byte bound gave 125K; 5 MiB of spaces and newlines mixed at random ~730K (no token holds
 * most mixes of 8), where pairs alone gave 125K.
 */
export function tokenFloor(text: string): number {
  const bytes = Buffer.from(text, 'utf8');
  return floorOfBytes(bytes, bytes.length);
}

function floorOfBytes(bytes: Uint8Array, length: number): number {
  const pairs = longestWithPair();
  const runs = longestWithWhitespaceRun();
  let pieces = 0;
  for (let start = 0; start < length;) {
    let end = start + 1;
    let limit = 255;
    // The last whitespace bytes of the piece, as base-4 digits, and how many there are in a row.
    let digit = WHITESPACE_DIGIT[bytes[start]!]!;
    let run = digit < 0 ? 0 : 1;
    let code = digit < 0 ? 0 : digit;
    for (; end < length; end++) {
      const longest = pairs[(bytes[end - 1]! << 8) | bytes[end]!]!;
      if (longest < limit) limit = longest;
      digit = WHITESPACE_DIGIT[bytes[end]!]!;
      if (digit < 0) run = code = 0;
      else {
        run++;
        code = ((code << 2) | digit) & 0xffff;
        if (run >= 8 && runs[code]! < limit) limit = runs[code]!;
      }
      if (end + 1 - start > limit) break;
    }
    pieces++;
    start = end;
  }
  return pieces;
}

/** Characters of a text whose floor is weighed between two turns of the event loop. */
const FLOOR_SLICE = 64 * 1024;

/** Where slices are encoded to be weighed: reused, as fresh memory costs more than the weighing. */
let sliceBytes: Buffer | null = null;

export interface TextFloors {
  /** Each text's floor; only when `complete`. */
  floors: number[];
  /** Their sum, or, when not `complete`, a lower bound of it above `stopAbove`. */
  total: number;
  complete: boolean;
}

/**
 * `tokenFloor` of each text; a long one is weighed in slices, giving the event loop back between
 * them. A cut between slices can split one piece in two, so each cut takes one off the sum. With
 * `stopAbove`, stops once the sum so far passes it: a prompt far too large is refused after
 * weighing only as much of it as that takes.
 */
export async function tokenFloors(texts: readonly string[], stopAbove = Infinity): Promise<TextFloors> {
  const floors: number[] = [];
  let total = 0;
  const encoder = new TextEncoder();
  for (const text of texts) {
    if (text.length <= FLOOR_SLICE) {
      floors.push(tokenFloor(text));
      total += floors.at(-1)!;
      if (total > stopAbove) return { floors: [], total, complete: false };
      continue;
    }
    const bytes = (sliceBytes ??= Buffer.allocUnsafe(FLOOR_SLICE * 3));
    let floor = 0;
    // Slices are weighed apart, so a slice equal to the one before (a run of one character) weighs the same.
    let previous = { slice: '', floor: 0 };
    for (let start = 0; start < text.length;) {
      const end = sliceEnd(text, start, FLOOR_SLICE);
      const slice = text.slice(start, end);
      if (slice !== previous.slice) {
        const { written } = encoder.encodeInto(slice, bytes);
        previous = { slice, floor: floorOfBytes(bytes, written) };
      }
      floor += previous.floor - (start === 0 ? 0 : 1);
      start = end;
      if (total + floor > stopAbove) return { floors: [], total: total + floor, complete: false };
      if (sliceSpent()) await nextSlice();
    }
    floors.push(floor);
    total += floor;
  }
  return { floors, total, complete: true };
}

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

async function countOnThread(chunks: string[]): Promise<number[]> {
  const { id, reply } = counting.open();
  counting.post({ id, chunks });
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
 * `floors` are the texts' `tokenFloors` when the caller has them. Chunks are counted apart, so
 * the floors of the chunks counted can be taken off the texts' floor: what is left stays a lower
 * bound of the rest (a text's floor is at most the sum of its chunks' floors).
 */
export async function countTexts(texts: readonly string[], stopAbove = Infinity, floors?: readonly number[]): Promise<TextCount> {
  const stops = stopAbove !== Infinity;
  let tokens = 0;
  // The same chunk again (a long run of one character) is counted and weighed once.
  const repeated = new Map<string, { count: number; floor: number }>();
  let floorLeft = 0;
  if (stops) for (const [index, text] of texts.entries()) floorLeft += floors?.[index] ?? tokenFloor(text);
  for (const [index, text] of texts.entries()) {
    const cached = textTokenCache.get(text);
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
      const runs = fresh.map(whitespaceRunTokens);
      const tokenized = fresh.filter((_, at) => runs[at] === undefined);
      const tokenizedCounts = tokenized.length > 0 ? await countOnThread(tokenized) : [];
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
    textTokenCache.remember(text, textTokens);
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
