import { isAscii, isUtf8 } from 'node:buffer';
import { LONG, parseAround, sequenceStart, unescapedQuote, unescapeNarrow, unescapeWide, type UnescapeState } from './json-literals.mjs';

/** Bytes outside long literals past which a body is left to the body thread: JSON.parse would hold the event loop. */
export const MAX_REST = 256 * 1024;

/** A long literal of the body, read: its quotes and its characters (Latin-1 bytes or UTF-16 code units). */
interface ReadLiteral {
  open: number;
  close: number;
  bytes: Uint8Array;
  latin1: boolean;
}

/** The long literal being read: where its characters go in `out`, how far it is read, whether in UTF-16. */
interface Reading {
  start: number;
  state: UnescapeState;
  wide: boolean;
}

export interface LongString {
  path: Array<string | number>;
  bytes: Uint8Array;
  latin1: boolean;
  /** The literal's JSON text as the client sent it (valid UTF-8, quotes included), when known. */
  json?: Uint8Array;
}

export type StreamedBody = { body: unknown; longs: LongString[] } | { deepAt: string };

/**
 * A large body's long string literals, read while the body arrives: each step reads the bytes that
 * came since the last one (a socket's chunk, ~64 KB: a fraction of a millisecond), so that a prompt
 * of megabytes is unescaped by the time its last byte is in, on the event loop, with no thread to
 * start (~40 ms on this VM, the first body after a quiet minute). What is read is exactly what the
 * body thread would read (json-literals.mjs serves both): each long literal's characters, and the
 * rest of the body, a few hundred bytes with a placeholder for each, given to JSON.parse at the end.
 *
 * Anything else leaves the body to the body thread (`failed`, or `finish` null): more than MAX_REST
 * bytes outside long literals (many short strings, long arrays of numbers), a literal JSON.parse
 * may refuse or that is not valid UTF-8, a syntax error anywhere, a long key. The thread then gives
 * JSON.parse's own answer, errors included.
 *
 * `out` holds the characters: twice the body's size covers every literal in UTF-16, as no
 * literal has more code units than bytes.
 */
export class StreamedLiterals {
  /** Where the next quote is looked for. */
  private at = 0;
  /** The opening quote of the string being read, or -1 between strings. */
  private open = -1;
  private reading: Reading | null = null;
  private readonly literals: ReadLiteral[] = [];
  /** Bytes outside long literals so far. */
  private rest = 0;
  /** Bytes of `out` taken by the literals read. */
  private used = 0;
  failed = false;

  constructor(private readonly out: ArrayBuffer) {}

  /** How far the body is read: the next step reads from here. */
  get position(): number {
    return this.at;
  }

  /** Reads what has arrived since the last step: `bytes` up to `received`. */
  advance(bytes: Uint8Array, received: number): void {
    while (!this.failed && this.at < received) {
      if (this.open === -1) {
        const quote = unescapedQuote(bytes, this.at, received);
        this.rest += (quote === -1 ? received : quote + 1) - this.at;
        if (this.rest > MAX_REST) this.failed = true;
        if (quote === -1) this.at = received;
        else this.at = (this.open = quote) + 1;
        continue;
      }
      const close = unescapedQuote(bytes, this.at, received);
      const end = close === -1 ? received : close;
      if (!this.reading && end - this.open - 1 >= LONG) this.reading = { start: this.used, state: { at: this.open + 1, written: 0 }, wide: false };
      if (this.reading) this.read(bytes, end, close !== -1);
      if (close === -1) {
        this.at = received;
        continue;
      }
      // A short string's bytes after its opening quote (counted with the bytes before it).
      if (!this.reading) this.rest += close - this.open;
      else if (!this.failed) this.literals.push(this.finishReading(this.reading, close));
      this.reading = null;
      this.open = -1;
      this.at = close + 1;
      if (this.rest > MAX_REST) this.failed = true;
    }
  }

  /** One step of the literal being read, up to `end` (its closing quote when `final`). */
  private read(bytes: Uint8Array, end: number, final: boolean): void {
    const reading = this.reading!;
    const { state } = reading;
    if (!reading.wide) {
      if (isAscii(bytes.subarray(state.at, end))) {
        const result = unescapeNarrow(bytes, end, new Uint8Array(this.out, reading.start), state, final);
        if (result === -1) this.failed = true;
        // -2: an escape past U+00FF, read below in UTF-16.
        if (result !== -2) return;
      }
      this.widen(reading);
    }
    // A UTF-8 sequence the last byte cuts is read at the next step, with its other bytes.
    const stop = final ? end : sequenceStart(bytes, state.at, end);
    if (!isUtf8(bytes.subarray(state.at, stop)) || unescapeWide(bytes, stop, new Uint16Array(this.out, reading.start), state, final) !== 0) {
      this.failed = true;
    }
  }

  /** The literal read so far as one byte a code unit, rewritten in place as two (from its end, as each unit moves right). */
  private widen(reading: Reading): void {
    const narrow = new Uint8Array(this.out, reading.start, reading.state.written);
    const wide = new Uint16Array(this.out, reading.start, reading.state.written);
    for (let index = reading.state.written - 1; index >= 0; index--) wide[index] = narrow[index]!;
    reading.wide = true;
  }

  private finishReading(reading: Reading, close: number): ReadLiteral {
    if (reading.state.at !== close) this.failed = true;
    const length = reading.wide ? reading.state.written * 2 : reading.state.written;
    // The next literal starts at an even byte, where its UTF-16 code units may go.
    this.used = reading.start + length + (length % 2);
    return { open: this.open, close, bytes: new Uint8Array(this.out, reading.start, length), latin1: !reading.wide };
  }

  /**
   * The body, all of it arrived in `bytes[0, length)`, with each long string in `longs` instead
   * (its place in the body null), or where it nests too deep; null if the body thread must decide.
   * The literals' JSON texts are views of `bytes`, which must then be kept as they are.
   */
  finish(bytes: Uint8Array, length: number, maxDepth: number): StreamedBody | null {
    if (this.failed || this.open !== -1 || this.at !== length || this.literals.length === 0) return null;
    const parsed = parseAround(
      bytes,
      length,
      this.literals.map(({ open, close }) => [open, close] as const),
      maxDepth,
    );
    if (parsed === null) return null;
    const { body, deepAt, found } = parsed;
    if (deepAt !== null) return { deepAt };
    if (found === null) return null;
    const longs: LongString[] = [];
    // A literal a later duplicate key replaced is not in the body.
    for (const [index, path] of found) {
      const { open, close, bytes: characters, latin1 } = this.literals[index]!;
      longs.push({ path, bytes: characters, latin1, json: bytes.subarray(open, close + 1) });
    }
    return { body, longs };
  }
}
