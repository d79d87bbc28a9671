/**
 * The body thread (see parse-json-body.ts): parses request bodies of megabytes off the gateway's
 * event loop, checks their nesting, and hands each long string back as bytes, so that the gateway
 * never builds a string the size of the body on its own heap. The result is exactly what
 * JSON.parse gives for the body decoded by Buffer.toString: invalid UTF-8 replaced, a byte-order
 * mark kept, lone surrogates kept. Plain JavaScript, so the thread needs no TypeScript loader when
 * run from the sources.
 *
 * Messages: `{ expect }`, the size of a large body that has begun to arrive; `{ id, end, bytes,
 * length, maxDepth }`, the body's bytes in a buffer shared with the gateway (which gathers the next
 * body in it once this one is answered), answered with `{ id, body, longs }` or `{ id, error }`;
 * `{ recycle }` gives back the buffer of a long string once the gateway has made its string.
 *
 * A long literal that is valid UTF-8 also goes back as its JSON text (`json`: its bytes from quote
 * to quote, a copy of its own), which the gateway writes upstream as it is instead of escaping the
 * string again (json-pieces.ts): for a prompt of megabytes with an escape every other character,
 * JSON.stringify took ~30 ms of the event loop's time.
 *
 * On the VM this was measured on, memory a process touches for the first time costs ~3-4 ms per
 * MiB, and every string of the body's size on the JavaScript heap is such memory. So each long
 * string literal is read straight from the body's bytes into a buffer kept for the next body, and
 * only the rest of the body (a few hundred bytes of a huge prompt) is decoded and given to
 * JSON.parse.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import { tooDeepAt } from './body-depth.mjs';
import { bufferPool } from './buffer-pool.mjs';

/** Strings at least this long go back as bytes; shorter ones travel inside the body. */
const LONG = 64 * 1024;

parentPort.on('message', (message) => {
  if (message.recycle) return recycle(message.recycle);
  if (message.expect) return prepare(message.expect);
  if (message.end) answer(message.id, Buffer.from(message.bytes, 0, message.length), message.maxDepth);
});

/** Buffers given back, for the next long strings (a new one has room for the same literal's two-byte units). */
const pool = bufferPool(2, (bytes) => new ArrayBuffer(bytes));
const recycle = (buffer) => pool.give(buffer);
const bufferOf = (size, room) => pool.take(size, room);

/**
 * A body of `size` bytes is arriving: a buffer for its long strings, with its first `size` bytes
 * written now, while the rest of the body arrives, rather than once it is there.
 */
function prepare(size) {
  if (pool.holds(size)) return;
  const buffer = bufferOf(size, 2 * size);
  new Uint8Array(buffer, 0, size).fill(0);
  recycle(buffer);
}

function answer(id, bytes, maxDepth) {
  let reply;
  try {
    reply = withLongLiterals(bytes, maxDepth) ?? whole(bytes, maxDepth);
  } catch (error) {
    return parentPort.postMessage({ id, error: { syntax: error.message } });
  }
  if (reply.deepAt !== undefined) return parentPort.postMessage({ id, error: { deepAt: reply.deepAt } });
  const { body, longs } = reply;
  parentPort.postMessage(
    { id, body, longs },
    longs.flatMap((long) => (long.json ? [long.bytes.buffer, long.json.buffer] : [long.bytes.buffer])),
  );
}

/** The body decoded whole and parsed by JSON.parse: what every body falls back to. */
function whole(bytes, maxDepth) {
  const text = decode(bytes);
  const body = text === '' ? undefined : JSON.parse(text);
  const deepAt = tooDeepAt(body, maxDepth);
  if (deepAt !== null) return { deepAt };
  const longs = [];
  return { body: takeLongStrings(body, longs), longs };
}

/** Buffer.toString('utf8'); for ASCII, Latin-1 gives the same string, outside the heap when over a megabyte. */
const decode = (bytes) => (isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8'));

/**
 * The body parsed with each long string literal read from its bytes, not by JSON.parse: the rest
 * of the body, with a placeholder string in place of each, goes to JSON.parse, and each long
 * literal is decoded into a kept buffer. Null when that cannot give JSON.parse's own answer
 * (no long literal, a syntax error anywhere, a long key): then `whole` decides.
 */
function withLongLiterals(bytes, maxDepth) {
  const literals = longLiterals(bytes);
  if (literals.length === 0) return null;
  // Placeholders no body can hold: the thread's randomness never leaves it.
  const nonce = `${randomUUID()}:`;
  const pieces = [];
  let at = 0;
  literals.forEach(([open, close], index) => {
    pieces.push(bytes.subarray(at, open), Buffer.from(`"${nonce}${index}"`));
    at = close + 1;
  });
  pieces.push(bytes.subarray(at));
  let body;
  try {
    body = JSON.parse(decode(Buffer.concat(pieces)));
  } catch {
    // A syntax error, or a region taken for a literal that was not one: `whole` says which.
    return null;
  }
  // Every literal is decoded, even one a later duplicate key replaced: JSON.parse checks them all.
  const decoded = [];
  for (const [open, close] of literals) {
    const long = literalBytes(bytes, open, close);
    if (long === null) {
      for (const done of decoded) recycle(done.bytes.buffer);
      return null;
    }
    decoded.push(long);
  }
  const deepAt = tooDeepAt(body, maxDepth);
  const found = placeholders(body, nonce);
  if (deepAt !== null || found === null) {
    for (const done of decoded) recycle(done.bytes.buffer);
    return deepAt !== null ? { deepAt } : null;
  }
  const longs = [];
  decoded.forEach((long, index) => {
    if (found.has(index)) longs.push({ path: found.get(index), ...long });
    else recycle(long.bytes.buffer);
  });
  return { body: typeof body === 'string' && found.size > 0 ? null : body, longs };
}

/** Bytes looked at a time while looking for long literals: every literal of LONG bytes holds a whole block. */
const BLOCK = LONG / 2;

/**
 * Where the string literals of at least LONG bytes are, as [opening quote, closing quote], in
 * order. A block of bytes without an unescaped quote lies inside a literal, or between two (a long
 * run of numbers, say): the placeholders then break the rest's syntax and `whole` decides.
 */
function longLiterals(bytes) {
  const literals = [];
  // Before `settled`, the bytes are sorted: it is just past a closing quote, or 0.
  let settled = 0;
  for (let start = 0; start + BLOCK <= bytes.length;) {
    const end = start + BLOCK;
    if (unescapedQuote(bytes.subarray(0, end), start) !== -1) {
      start = end;
      continue;
    }
    const close = unescapedQuote(bytes, end);
    // No quote left: no literal after this block either (an unterminated one is `whole`'s to refuse).
    if (close === -1) break;
    const open = unescapedQuoteBefore(bytes, start, settled);
    if (open === -1) {
      // No quote since the last literal: the bytes up to `close` lie outside strings.
      start = close;
      continue;
    }
    if (close - open - 1 >= LONG) literals.push([open, close]);
    start = settled = close + 1;
  }
  return literals;
}

/** Whether the quote at `at` follows an odd run of backslashes. */
function escaped(bytes, at) {
  let before = at - 1;
  while (before >= 0 && bytes[before] === 0x5c) before--;
  return (at - 1 - before) % 2 === 1;
}

/** The first unescaped quote at or after `from`, or -1. */
function unescapedQuote(bytes, from) {
  for (let at = bytes.indexOf(0x22, from); at !== -1; at = bytes.indexOf(0x22, at + 1)) {
    if (!escaped(bytes, at)) return at;
  }
  return -1;
}

/** The last unescaped quote before `before` and at or after `from`, or -1. */
function unescapedQuoteBefore(bytes, before, from) {
  for (let at = before > 0 ? bytes.lastIndexOf(0x22, before - 1) : -1; at >= from; at = at > 0 ? bytes.lastIndexOf(0x22, at - 1) : -1) {
    if (!escaped(bytes, at)) return at;
  }
  return -1;
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
function eachChild(body, visit) {
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
 * The characters of the string literal between the quotes at `open` and `close`, as bytes in a
 * kept buffer: Latin-1 when the literal is ASCII and its escapes stay under U+0100, else UTF-16
 * code units; and, when the literal is valid UTF-8, its JSON text (quotes included) in a buffer
 * of its own. Null when JSON.parse would refuse the literal.
 */
function literalBytes(bytes, open, close) {
  const text = new Uint8Array(bytes.buffer, bytes.byteOffset + open + 1, close - open - 1);
  // Never recycled: the gateway keeps it until the request is over.
  const json = () => new Uint8Array(bytes.subarray(open, close + 1));
  if (isAscii(text)) {
    const narrow = bufferOf(text.length, 2 * text.length);
    const length = unescapeNarrow(text, new Uint8Array(narrow));
    if (length >= 0) return { bytes: new Uint8Array(narrow, 0, length), latin1: true, json: json() };
    recycle(narrow);
    // -2: an escape past U+00FF, in two-byte units below.
    if (length === -1) return null;
  } else if (!isUtf8(text)) {
    // Invalid UTF-8, replaced as Buffer.toString replaces it: rare enough for the heap.
    let value;
    try {
      value = JSON.parse(bytes.subarray(open, close + 1).toString('utf8'));
    } catch {
      return null;
    }
    return asBytes(value);
  }
  const wide = bufferOf(text.length * 2);
  const length = unescapeWide(text, new Uint16Array(wide));
  if (length < 0) {
    recycle(wide);
    return null;
  }
  return { bytes: new Uint8Array(wide, 0, length * 2), latin1: false, json: json() };
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

/** The code unit of the `\\u` escape whose digits start at `at`, or -1 if they are not four hex digits. */
function unicodeEscape(text, at) {
  if (at + 4 > text.length) return -1;
  const a = HEX[text[at]];
  const b = HEX[text[at + 1]];
  const c = HEX[text[at + 2]];
  const d = HEX[text[at + 3]];
  return (a | b | c | d) < 0 ? -1 : (a << 12) | (b << 8) | (c << 4) | d;
}

/**
 * Writes the code units of an ASCII literal's text (without its quotes) to `out`, one byte each;
 * their count, or -1 if JSON.parse would refuse the text (a control character, a bad escape), or
 * -2 if an escape is past U+00FF. Runs without escapes are copied as they are.
 */
function unescapeNarrow(text, out) {
  const length = text.length;
  let at = firstSpecial(text);
  if (at === -1) at = length;
  out.set(text.subarray(0, at));
  let written = at;
  while (at < length) {
    const byte = text[at++];
    if (byte >= 0x20 && byte !== 0x5c) {
      out[written++] = byte;
      continue;
    }
    if (byte !== 0x5c) return -1;
    // The closing quote is never escaped, so a byte follows the backslash.
    let unit = ESCAPES[text[at++]];
    if (unit === -2) {
      unit = unicodeEscape(text, at);
      at += 4;
      if (unit > 0xff) return -2;
    }
    if (unit === -1) return -1;
    out[written++] = unit;
  }
  return written;
}

/**
 * Writes the UTF-16 code units of a literal's text (valid UTF-8, without its quotes) to `out`;
 * their count, or -1 if JSON.parse would refuse the text.
 */
function unescapeWide(text, out) {
  const length = text.length;
  let written = 0;
  for (let at = 0; at < length;) {
    const byte = text[at];
    if (byte < 0x80) {
      at++;
      if (byte >= 0x20 && byte !== 0x5c) {
        out[written++] = byte;
        continue;
      }
      if (byte !== 0x5c) return -1;
      let unit = ESCAPES[text[at++]];
      if (unit === -2) {
        unit = unicodeEscape(text, at);
        at += 4;
      }
      if (unit === -1) return -1;
      out[written++] = unit;
    } else if (byte < 0xe0) {
      out[written++] = ((byte & 0x1f) << 6) | (text[at + 1] & 0x3f);
      at += 2;
    } else if (byte < 0xf0) {
      out[written++] = ((byte & 0x0f) << 12) | ((text[at + 1] & 0x3f) << 6) | (text[at + 2] & 0x3f);
      at += 3;
    } else {
      const point = (((byte & 0x07) << 18) | ((text[at + 1] & 0x3f) << 12) | ((text[at + 2] & 0x3f) << 6) | (text[at + 3] & 0x3f)) - 0x10000;
      out[written++] = 0xd800 + (point >> 10);
      out[written++] = 0xdc00 + (point & 0x3ff);
      at += 4;
    }
  }
  return written;
}

/** The first byte of `bytes` that is a control character or a backslash, or -1; four bytes a step. */
function firstSpecial(bytes) {
  let at = 0;
  const length = bytes.length;
  for (; at < length && (bytes.byteOffset + at) % 4 !== 0; at++) if (bytes[at] < 0x20 || bytes[at] === 0x5c) return at;
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset + at, (length - at) >>> 2);
  let index = 0;
  for (; index < words.length; index++) {
    const word = words[index];
    const backslash = word ^ 0x5c5c5c5c;
    // Has a byte under 0x20, or `backslash` a zero byte (the bit tricks of has-less-than and has-zero).
    if ((((word - 0x20202020) & ~word) | ((backslash - 0x01010101) & ~backslash)) & 0x80808080) break;
  }
  // The word with one, looked at byte by byte (or the bytes after the last whole word).
  at += index * 4;
  for (; at < length; at++) if (bytes[at] < 0x20 || bytes[at] === 0x5c) return at;
  return -1;
}

/**
 * Replaces every long string of `body` by null, listing where it was and its characters as
 * bytes. Returns the body (null if the body itself was a long string).
 */
function takeLongStrings(body, longs) {
  if (typeof body === 'string') {
    if (body.length < LONG) return body;
    longs.push({ path: [], ...asBytes(body) });
    return null;
  }
  eachChild(body, (container, key, child, path) => {
    if (typeof child !== 'string' || child.length < LONG) return;
    longs.push({ path: [...path, key], ...asBytes(child) });
    // Defined, not assigned: a key named __proto__ is an own property of a parsed body.
    Object.defineProperty(container, key, { value: null });
  });
  return body;
}

/** A string's characters as bytes: Latin-1 when every one fits in a byte, else UTF-16 code units (lone surrogates kept). */
function asBytes(text) {
  const latin1 = !/[\u0100-\uffff]/.test(text);
  const size = latin1 ? text.length : text.length * 2;
  const buffer = bufferOf(size);
  Buffer.from(buffer, 0, size).write(text, latin1 ? 'latin1' : 'utf16le');
  return { bytes: new Uint8Array(buffer, 0, size), latin1 };
}
