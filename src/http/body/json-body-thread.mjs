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
import { parentPort } from 'node:worker_threads';
import { tooDeepAt } from './body-depth.mjs';
import { bufferPool } from './buffer-pool.mjs';
import { decodeText, eachChild, escaped, LONG, parseAround, unescapedQuote, unescapeNarrow, unescapeWide } from './json-literals.mjs';

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
  const text = decodeText(bytes);
  const body = text === '' ? undefined : JSON.parse(text);
  const deepAt = tooDeepAt(body, maxDepth);
  if (deepAt !== null) return { deepAt };
  const longs = [];
  return { body: takeLongStrings(body, longs), longs };
}

/**
 * The body parsed with each long string literal read from its bytes, not by JSON.parse: the rest
 * of the body, with a placeholder string in place of each, goes to JSON.parse, and each long
 * literal is decoded into a kept buffer. Null when that cannot give JSON.parse's own answer
 * (no long literal, a syntax error anywhere, a long key): then `whole` decides.
 */
function withLongLiterals(bytes, maxDepth) {
  const literals = longLiterals(bytes);
  if (literals.length === 0) return null;
  // A syntax error, or a region taken for a literal that was not one: `whole` says which.
  const parsed = parseAround(bytes, bytes.length, literals, maxDepth);
  if (parsed === null) return null;
  // Every literal is decoded, even one a later duplicate key replaced: JSON.parse checks them all,
  // and a literal it refuses is its answer before any nesting.
  const decoded = [];
  for (const [open, close] of literals) {
    const long = literalBytes(bytes, open, close);
    if (long === null) {
      for (const done of decoded) recycle(done.bytes.buffer);
      return null;
    }
    decoded.push(long);
  }
  const { body, deepAt, found } = parsed;
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
    if (unescapedQuote(bytes, start, end) !== -1) {
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

/** The last unescaped quote before `before` and at or after `from`, or -1. */
function unescapedQuoteBefore(bytes, before, from) {
  for (let at = before > 0 ? bytes.lastIndexOf(0x22, before - 1) : -1; at >= from; at = at > 0 ? bytes.lastIndexOf(0x22, at - 1) : -1) {
    if (!escaped(bytes, at)) return at;
  }
  return -1;
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
    const state = { at: 0, written: 0 };
    const result = unescapeNarrow(text, text.length, new Uint8Array(narrow), state);
    if (result === 0) return { bytes: new Uint8Array(narrow, 0, state.written), latin1: true, json: json() };
    recycle(narrow);
    // -2: an escape past U+00FF, in two-byte units below.
    if (result === -1) return null;
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
  const state = { at: 0, written: 0 };
  if (unescapeWide(text, text.length, new Uint16Array(wide), state) !== 0) {
    recycle(wide);
    return null;
  }
  return { bytes: new Uint8Array(wide, 0, state.written * 2), latin1: false, json: json() };
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
