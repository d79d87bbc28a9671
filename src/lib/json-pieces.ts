import type { Writable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { sliceEnd } from './slice-end.ts';
import { nextSlice, sliceSpent } from './turn-slices.ts';

/** A JSON text as pieces to write in turn, and its length in UTF-8 bytes. */
export interface JsonPieces {
  pieces: Array<string | Buffer>;
  bytes: number;
}

/** Bodies whose strings hold more characters than this are serialized in pieces. */
const LARGE = 256 * 1024;
/** Characters of a piece, about: a string is cut at this length, other parts gather up to it. */
const PIECE = 32 * 1024;

/**
 * `JSON.stringify(value)`, as pieces. A body with a prompt of megabytes is never made into one
 * string: that would hold the event loop for as long as the kernel takes to hand over that much
 * fresh memory (~15-25 ms for 5 MiB on this VM). Its pieces are encoded to UTF-8 as they are made,
 * into buffers of ~32K characters the allocator reuses (no string of the body stays on the heap
 * for the collector to move), and the work is spread over turns of the event loop. Other bodies
 * are one piece, from JSON.stringify itself.
 *
 * `texts` gives the JSON text of some long strings (the client's own, parse-json-body.ts
 * `jsonTextsOf`): a string found there is written as that text, not escaped again. The text
 * must be valid UTF-8 and a JSON string literal whose value is the string, quotes included.
 */
export async function jsonPieces(value: unknown, texts?: ReadonlyMap<string, Uint8Array>): Promise<JsonPieces> {
  if (!holdsMoreThan(value, LARGE)) {
    const text = JSON.stringify(value);
    return { pieces: [text], bytes: Buffer.byteLength(text) };
  }
  const pieces: Buffer[] = [];
  let bytes = 0;
  let current = '';
  const add = (piece: Buffer) => {
    pieces.push(piece);
    bytes += piece.length;
  };
  for (const part of jsonParts(value, texts)) {
    if (typeof part !== 'string') {
      if (current !== '') add(Buffer.from(current));
      current = '';
      add(Buffer.from(part.buffer, part.byteOffset, part.byteLength));
      continue;
    }
    current += part;
    if (current.length < PIECE) continue;
    add(Buffer.from(current));
    current = '';
    if (sliceSpent()) await nextSlice();
  }
  if (current !== '') add(Buffer.from(current));
  return { pieces, bytes };
}

/** Whether the strings of `value` (keys aside) hold more than `limit` characters; walked iteratively. */
function holdsMoreThan(value: unknown, limit: number): boolean {
  const stack: unknown[] = [value];
  let characters = 0;
  while (stack.length > 0) {
    const next = stack.pop();
    if (typeof next === 'string') {
      characters += next.length;
      if (characters > limit) return true;
    } else if (typeof next === 'object' && next !== null) {
      for (const key in next) stack.push((next as Record<string, unknown>)[key]);
    }
  }
  return false;
}

/**
 * The parts of `JSON.stringify(value)`, in order: containers holding long strings are opened, the
 * rest stringified whole; a long string found in `texts` is that text.
 */
function* jsonParts(value: unknown, texts: ReadonlyMap<string, Uint8Array> | undefined): Generator<string | Uint8Array> {
  if (typeof value === 'string' && value.length > PIECE) {
    const text = texts?.get(value);
    return text ? yield text : yield* stringParts(value);
  }
  const opened = typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
  if (!opened || !holdsMoreThan(value, PIECE)) return yield JSON.stringify(value);
  if (Array.isArray(value)) {
    yield '[';
    for (let index = 0; index < value.length; index++) {
      if (index > 0) yield ',';
      const item: unknown = value[index];
      // As JSON.stringify does: what has no JSON form is null in an array.
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') yield 'null';
      else yield* jsonParts(item, texts);
    }
    return yield ']';
  }
  let first = true;
  for (const [key, item] of Object.entries(value)) {
    // ...and is left out of an object.
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
    yield `${first ? '{' : ','}${JSON.stringify(key)}:`;
    first = false;
    yield* jsonParts(item, texts);
  }
  yield first ? '{}' : '}';
}

/** A long string's JSON text, a slice at a time, never cutting a surrogate pair (JSON.stringify would escape its halves). */
function* stringParts(text: string): Generator<string> {
  yield '"';
  for (let start = 0; start < text.length;) {
    const end = sliceEnd(text, start, PIECE);
    yield JSON.stringify(text.slice(start, end)).slice(1, -1);
    start = end;
  }
  yield '"';
}

/**
 * Writes the pieces to `stream` and ends it. One piece goes in one write; more (a prompt of
 * megabytes) one at a time, giving the event loop back after each: a socket that takes a write at
 * once emits `drain` on the next tick, so waiting for `drain` alone would write every piece in
 * one turn of the event loop. Stops early when the stream is destroyed or fails (the stream
 * reports why); never rejects.
 */
export async function endWithPieces(stream: Writable, pieces: ReadonlyArray<string | Buffer>): Promise<void> {
  if (pieces.length === 1) {
    stream.end(pieces[0]);
    return;
  }
  for (const piece of pieces) {
    if (stream.destroyed) return;
    if (!stream.write(piece) && !(await drainOrClose(stream))) return;
    await nextTurn();
  }
  if (!stream.destroyed) stream.end();
}

/** Waits for `drain`; false when the stream closed first (a failure, which its error listeners report). */
function drainOrClose(stream: Writable): Promise<boolean> {
  return new Promise((resolve) => {
    const drained = () => {
      stream.off('close', closed);
      resolve(true);
    };
    const closed = () => {
      stream.off('drain', drained);
      resolve(false);
    };
    stream.once('drain', drained).once('close', closed);
  });
}
