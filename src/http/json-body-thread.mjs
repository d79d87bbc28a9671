/**
 * The body thread (see parse-json-body.ts): decodes and parses request bodies of megabytes off the
 * gateway's event loop, checks their nesting, and hands each long string back as bytes, so that
 * the gateway never builds a string the size of the body on its own heap. Invalid UTF-8 and a
 * byte-order mark are kept as Buffer.toString keeps them. Plain JavaScript, so the thread needs
 * no TypeScript loader when run from the sources.
 *
 * Messages: `{ id, begin }`, then `{ id, chunk }` as the body arrives, then `{ id, end }` (answered
 * with `{ id, body, longs }` or `{ id, error }`) or `{ id, drop }`. Chunks of a job not begun (one
 * begun on a thread that since failed) are ignored. `{ recycle }` gives back the buffer of a long
 * string once the gateway has made its string.
 */
import { StringDecoder } from 'node:string_decoder';
import { parentPort } from 'node:worker_threads';
import { tooDeepAt } from './body-depth.mjs';

/** Strings at least this long go back as bytes; shorter ones travel inside the body. */
const LONG = 64 * 1024;

const jobs = new Map();

parentPort.on('message', (message) => {
  if (message.recycle) return recycle(message.recycle);
  const { id } = message;
  if (message.begin) {
    jobs.set(id, { decoder: new StringDecoder('utf8'), parts: [] });
    return;
  }
  const job = jobs.get(id);
  if (!job) return;
  // Decoded as it arrives into pieces of about the chunk's size, joined once at the end.
  if (message.chunk) job.parts.push(job.decoder.write(message.chunk));
  else if (message.drop) jobs.delete(id);
  else if (message.end) {
    jobs.delete(id);
    job.parts.push(job.decoder.end());
    answer(id, job.parts.join(''), message.maxDepth);
  }
});

/**
 * Buffers given back, for the next long strings: memory already written once is reused at memcpy
 * speed, where fresh memory costs ~3-4 ms per MiB on this VM. At most POOL of them are kept.
 */
const pool = [];
const POOL = 2;

function recycle(buffer) {
  pool.push(buffer);
  pool.sort((a, b) => b.byteLength - a.byteLength);
  pool.length = Math.min(pool.length, POOL);
}

/** A buffer of at least `size` bytes: the smallest pooled one that fits, else a new one rounded up to a MiB. */
function bufferOf(size) {
  for (let index = pool.length - 1; index >= 0; index--) {
    if (pool[index].byteLength >= size) return pool.splice(index, 1)[0];
  }
  return new ArrayBuffer(Math.ceil(size / 1048576) * 1048576);
}

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
  const size = latin1 ? text.length : text.length * 2;
  const buffer = bufferOf(size);
  Buffer.from(buffer, 0, size).write(text, latin1 ? 'latin1' : 'utf16le');
  return { bytes: new Uint8Array(buffer, 0, size), latin1 };
}
