import { inflateRawSync } from 'node:zlib';
import { sliceEnd } from '../lib/slice-end.ts';
import { nextSlice, sliceSpent } from '../lib/turn-slices.ts';
import { CL100K_PAIR_TABLE, CL100K_WHITESPACE_RUN_COUNTS, CL100K_WHITESPACE_RUNS } from './cl100k-pair-table.ts';

/**
 * The two cheap bounds of a text's cl100k tokens (text-token-count.ts has the count itself):
 * `utf8Bytes` above, `tokenFloor` below, each measured in slices for long texts.
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
export function whitespaceRunTokens(chunk: string): number | undefined {
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
