/**
 * Reading JSON string literals straight from a body's bytes, as JSON.parse would read them: shared
 * by the body thread (json-body-thread.mjs), which reads a whole body's long literals at once, and
 * the gateway (streamed-literals.ts), which reads them while the body arrives. Plain JavaScript,
 * for that thread.
 *
 * The unescaping functions work in steps: each reads `text` from `state.at` up to `end`, writes
 * code units to `out` from `state.written`, and moves both on. Unless `final`, a step stops before
 * an escape that is not whole before `end` (the next bytes have not arrived); final, that is a
 * literal JSON.parse refuses.
 */

import { isAscii } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { tooDeepAt } from './body-depth.mjs';

/** Literals at least this long (in bytes, quotes aside) are read from the bytes; shorter ones are left to JSON.parse. */
export const LONG = 64 * 1024;

/** Whether the quote at `at` follows an odd run of backslashes. */
export function escaped(bytes, at) {
  let before = at - 1;
  while (before >= 0 && bytes[before] === 0x5c) before--;
  return (at - 1 - before) % 2 === 1;
}

/** The first unescaped quote at or after `from` and before `end`, or -1. */
export function unescapedQuote(bytes, from, end = bytes.length) {
  // Searched in the bytes before `end` only: past it may lie megabytes without a quote.
  const within = end < bytes.length ? bytes.subarray(0, end) : bytes;
  for (let at = within.indexOf(0x22, from); at !== -1; at = within.indexOf(0x22, at + 1)) {
    if (!escaped(within, at)) return at;
  }
  return -1;
}

/** Buffer.toString('utf8'); for ASCII, Latin-1 gives the same string, outside the heap when over a megabyte. */
export const decodeText = (bytes) => (isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8'));

/**
 * The body in `bytes[0, length)` parsed with a placeholder string in place of each of `literals`
 * ([opening quote, closing quote], in order): null when JSON.parse refuses that (then the whole
 * body decides), else the body, where it nests deeper than `maxDepth` (or null), and where each
 * placeholder sits (`placeholders`: null if one is a key). The callers read the literals themselves.
 */
export function parseAround(bytes, length, literals, maxDepth) {
  // Placeholders no body can hold.
  const nonce = `${randomUUID()}:`;
  const pieces = [];
  let at = 0;
  literals.forEach(([open, close], index) => {
    pieces.push(bytes.subarray(at, open), Buffer.from(`"${nonce}${index}"`));
    at = close + 1;
  });
  pieces.push(bytes.subarray(at, length));
  let body;
  try {
    body = JSON.parse(decodeText(Buffer.concat(pieces)));
  } catch {
    return null;
  }
  return { body, deepAt: tooDeepAt(body, maxDepth), found: placeholders(body, nonce) };
}

/**
 * Where each placeholder string sits in `body` (placeholder index -> path), each replaced by null;
 * null if a placeholder is a key.
 */
function placeholders(body, nonce) {
  const found = new Map();
  const isPlaceholder = (value) => value.length > nonce.length && value.startsWith(nonce);
  const index = (value) => Number(value.slice(nonce.length));
  if (typeof body === 'string') {
    if (isPlaceholder(body)) found.set(index(body), []);
    return found;
  }
  let keyIsPlaceholder = false;
  eachChild(body, (container, key, child, path) => {
    if (typeof key === 'string' && isPlaceholder(key)) keyIsPlaceholder = true;
    if (typeof child !== 'string' || !isPlaceholder(child)) return;
    found.set(index(child), [...path, key]);
    // Defined, not assigned: a key named __proto__ is an own property of a parsed body.
    Object.defineProperty(container, key, { value: null });
  });
  return keyIsPlaceholder ? null : found;
}

/**
 * Calls `visit(container, key, child, path)` for every member of every container in `body`, `path`
 * the container's. Arrays are walked by index (for...in on an array of a million numbers took a
 * quarter second), and a path is made only for a container.
 */
export function eachChild(body, visit) {
  const stack = typeof body === 'object' && body !== null ? [{ value: body, path: [] }] : [];
  while (stack.length > 0) {
    const { value, path } = stack.pop();
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) {
        const child = value[index];
        visit(value, index, child, path);
        if (typeof child === 'object' && child !== null) stack.push({ value: child, path: [...path, index] });
      }
      continue;
    }
    for (const key in value) {
      const child = value[key];
      visit(value, key, child, path);
      if (typeof child === 'object' && child !== null) stack.push({ value: child, path: [...path, key] });
    }
  }
}

/**
 * What each byte after a backslash stands for: the code unit, -1 for none (JSON.parse refuses
 * it), -2 for `u` (four hex digits follow).
 */
const ESCAPES = new Int32Array(256).fill(-1);
for (const [letter, unit] of Object.entries({ '"': 0x22, '\\': 0x5c, '/': 0x2f, b: 0x08, f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09, u: -2 })) {
  ESCAPES[letter.charCodeAt(0)] = unit;
}

/** The value of each byte as a hex digit, or -1. */
const HEX = new Int32Array(256).fill(-1);
for (let digit = 0; digit < 16; digit++) HEX[digit.toString(16).charCodeAt(0)] = HEX[digit.toString(16).toUpperCase().charCodeAt(0)] = digit;

/** The code unit of the `\\u` escape whose digits start at `at` (all four there), or -1 if they are not hex digits. */
function unicodeEscape(text, at) {
  const a = HEX[text[at]];
  const b = HEX[text[at + 1]];
  const c = HEX[text[at + 2]];
  const d = HEX[text[at + 3]];
  return (a | b | c | d) < 0 ? -1 : (a << 12) | (b << 8) | (c << 4) | d;
}

/**
 * A step over an ASCII literal's text (without its quotes), one byte a code unit; runs without
 * escapes are copied as they are. 0, or -1 if JSON.parse would refuse the text (a control
 * character, a bad escape), or -2 at an escape past U+00FF (`state` is then at its backslash).
 */
export function unescapeNarrow(text, end, out, state, final = true) {
  let at = state.at;
  let written = state.written;
  const plain = firstSpecial(text, at, end);
  const run = plain === -1 ? end - at : plain;
  out.set(text.subarray(at, at + run), written);
  at += run;
  written += run;
  let result = 0;
  while (at < end) {
    const byte = text[at];
    if (byte >= 0x20 && byte !== 0x5c) {
      out[written++] = byte;
      at++;
      continue;
    }
    if (byte !== 0x5c || at + 1 >= end) {
      if (byte !== 0x5c || final) result = -1;
      break;
    }
    let unit = ESCAPES[text[at + 1]];
    let size = 2;
    if (unit === -2) {
      if (at + 6 > end) {
        if (final) result = -1;
        break;
      }
      unit = unicodeEscape(text, at + 2);
      size = 6;
      if (unit > 0xff) {
        result = -2;
        break;
      }
    }
    if (unit === -1) {
      result = -1;
      break;
    }
    out[written++] = unit;
    at += size;
  }
  state.at = at;
  state.written = written;
  return result;
}

/**
 * A step over a literal's text (valid UTF-8, without its quotes), into UTF-16 code units: 0, or
 * -1 if JSON.parse would refuse the text. Stops before a character not whole before `end`.
 *
 * Its escape branch repeats unescapeNarrow's on purpose: one helper for both made 5 MiB of spaces
 * and newlines 8% slower to unescape once optimized (23.4-24.5 against 21.2-22.6 ms) and 30% slower
 * before (236 against 180 ms with --no-opt), and a process's first huge prompt runs that code cold.
 */
export function unescapeWide(text, end, out, state, final = true) {
  let at = state.at;
  let written = state.written;
  let result = 0;
  while (at < end) {
    const byte = text[at];
    if (byte < 0x80) {
      if (byte >= 0x20 && byte !== 0x5c) {
        out[written++] = byte;
        at++;
        continue;
      }
      if (byte !== 0x5c || at + 1 >= end) {
        if (byte !== 0x5c || final) result = -1;
        break;
      }
      let unit = ESCAPES[text[at + 1]];
      let size = 2;
      if (unit === -2) {
        if (at + 6 > end) {
          if (final) result = -1;
          break;
        }
        unit = unicodeEscape(text, at + 2);
        size = 6;
      }
      if (unit === -1) {
        result = -1;
        break;
      }
      out[written++] = unit;
      at += size;
    } else if (byte < 0xe0) {
      if (at + 2 > end) break;
      out[written++] = ((byte & 0x1f) << 6) | (text[at + 1] & 0x3f);
      at += 2;
    } else if (byte < 0xf0) {
      if (at + 3 > end) break;
      out[written++] = ((byte & 0x0f) << 12) | ((text[at + 1] & 0x3f) << 6) | (text[at + 2] & 0x3f);
      at += 3;
    } else {
      if (at + 4 > end) break;
      const point = (((byte & 0x07) << 18) | ((text[at + 1] & 0x3f) << 12) | ((text[at + 2] & 0x3f) << 6) | (text[at + 3] & 0x3f)) - 0x10000;
      out[written++] = 0xd800 + (point >> 10);
      out[written++] = 0xdc00 + (point & 0x3ff);
      at += 4;
    }
  }
  state.at = at;
  state.written = written;
  return result;
}

/**
 * `end`, or where the UTF-8 sequence that `end` cuts begins (a sequence is never split between two
 * steps; at most 3 bytes back, none before `from`).
 */
export function sequenceStart(bytes, from, end) {
  for (let back = 1; back <= 3 && end - back >= from; back++) {
    const byte = bytes[end - back];
    if (byte < 0x80) return end;
    if (byte >= 0xc0) return back < (byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2) ? end - back : end;
  }
  return end;
}

/** A control character or a backslash. */
// eslint-disable-next-line no-control-regex -- raw control characters are what JSON.parse refuses in a string
const SPECIAL = /[\x00-\x1f\\]/;
/** Bytes of an ASCII text searched at a time: a string of this length stays in the young generation. */
const SEARCHED = 32 * 1024;

/**
 * How far from `at` the first control character or backslash of `bytes` before `end` is, or -1.
 * A RegExp over the bytes as Latin-1 (irregexp's machine code, and memcpy for the string) rather
 * than a loop of our own: on a process's first huge prompt this code has not been optimized yet,
 * and a JavaScript loop then ran 5 MiB in 49 ms (`--no-opt`) against 19 for this; optimized, 8-11
 * against 14. bench:huge, English as a process's first huge prompt: 58-91 ms against 59-119
 * (twelve runs and eight, partly alternated; the box's noise is of the same size).
 */
function firstSpecial(bytes, at, end) {
  for (let from = at; from < end; from += SEARCHED) {
    const found = SPECIAL.exec(Buffer.prototype.latin1Slice.call(bytes, from, Math.min(end, from + SEARCHED)));
    if (found !== null) return from - at + found.index;
  }
  return -1;
}
