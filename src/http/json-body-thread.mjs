/**
 * The body thread (see parse-json-body.ts): decodes and parses request bodies of megabytes off the
 * gateway's event loop, checks their nesting, and hands each long string back as bytes, so that
 * the gateway never builds a string the size of the body on its own heap. Invalid UTF-8 and a
 * byte-order mark are kept as Buffer.toString keeps them. Plain JavaScript, so
 * the thread needs no TypeScript loader when run from the sources.
 *
 * Messages: `{ id, begin }`, then `{ id, chunk }` as the body arrives, then `{ id, end }` (answered
 * with `{ id, body, longs }` or `{ id, error }`) or `{ id, drop }`. Chunks of a job not begun (one
 * begun on a thread that since failed) are ignored.
 */
import { parentPort } from 'node:worker_threads';
import { tooDeepAt } from './body-depth.mjs';

/** Strings at least this long go back as bytes; shorter ones travel inside the body. */
const LONG = 64 * 1024;

const jobs = new Map();

parentPort.on('message', (message) => {
  const { id } = message;
  if (message.begin) {
    jobs.set(id, []);
    return;
  }
  const chunks = jobs.get(id);
  if (!chunks) return;
  if (message.chunk) chunks.push(message.chunk);
  else if (message.drop) jobs.delete(id);
  else if (message.end) {
    jobs.delete(id);
    // Decoded whole, at the end: as fast as UTF-8 decoding gets, where decoding as chunks arrive is several times slower.
    answer(id, Buffer.concat(chunks).toString('utf8'), message.maxDepth);
  }
});

function answer(id, text, maxDepth) {
  let body;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch (error) {
    return parentPort.postMessage({ id, error: { syntax: error.message } });
  }
  const deepAt = tooDeepAt(body, maxDepth);
  if (deepAt !== null) return parentPort.postMessage({ id, error: { deepAt } });
  const longs = [];
  const taken = takeLongStrings(body, longs);
  parentPort.postMessage(
    { id, body: taken, longs },
    longs.map((long) => long.bytes.buffer),
  );
}

/**
 * Replaces every long string of `body` by null, listing where it was and its characters as
 * bytes: Latin-1 when every character fits in one byte, else UTF-16 code units (lone surrogates
 * kept). Returns the body (null if the body itself was a long string).
 */
function takeLongStrings(body, longs) {
  if (typeof body === 'string') {
    if (body.length < LONG) return body;
    longs.push({ path: [], ...asBytes(body) });
    return null;
  }
  const stack = typeof body === 'object' && body !== null ? [{ value: body, path: [] }] : [];
  while (stack.length > 0) {
    const { value, path } = stack.pop();
    const isArray = Array.isArray(value);
    for (const key in value) {
      const child = value[key];
      const at = [...path, isArray ? Number(key) : key];
      if (typeof child === 'string' && child.length >= LONG) {
        longs.push({ path: at, ...asBytes(child) });
        // Defined, not assigned: a key named __proto__ is an own property of a parsed body.
        Object.defineProperty(value, key, { value: null });
      } else if (typeof child === 'object' && child !== null) stack.push({ value: child, path: at });
    }
  }
  return body;
}

function asBytes(text) {
  const latin1 = !/[\u0100-\uffff]/.test(text);
  const bytes = Buffer.allocUnsafeSlow(latin1 ? text.length : text.length * 2);
  bytes.write(text, latin1 ? 'latin1' : 'utf16le');
  return { bytes: new Uint8Array(bytes.buffer, 0, bytes.length), latin1 };
}
