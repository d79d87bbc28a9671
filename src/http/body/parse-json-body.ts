import type { Readable } from 'node:stream';
import { errorCodes, type FastifyRequest } from 'fastify';
import { GatewayError } from '../../errors/gateway-error.ts';
import { ThreadJobs, threadEntry } from '../../lib/thread-jobs.ts';
import { nextSlice, sliceSpent } from '../../lib/turn-slices.ts';
import { startCounting } from '../../tokens/text-token-count.ts';
import { tooDeepAt } from './body-depth.mjs';
import { bufferPool } from './buffer-pool.mjs';
import { StreamedLiterals, type LongString } from './streamed-literals.ts';

/** Deeper than any real tool schema or message; deeper bodies would exhaust recursive readers (JSON.stringify). */
export const MAX_BODY_DEPTH = 64;

/** Refuse a body nested deeper than `maxDepth`, naming where. */
export function assertBodyDepth(body: unknown, maxDepth = MAX_BODY_DEPTH): void {
  const path = tooDeepAt(body, maxDepth);
  if (path !== null) throw tooDeep(path, maxDepth);
}

const tooDeep = (path: string, maxDepth: number) => new GatewayError('invalid_request', `${path} nests deeper than ${maxDepth} levels.`, {}, path);

/** JSON body parser of every route: empty is undefined, too deep is invalid_request. */
export function parseJsonBody(text: string): unknown {
  if (text === '') return undefined;
  const body: unknown = JSON.parse(text);
  assertBodyDepth(body);
  return body;
}

/** Bodies above this size are read as they arrive (or on the body thread), and warm the token-counting thread once answered. */
export const LARGE_BODY = 1024 * 1024;

const JSON_TEXTS = Symbol('json texts');

/**
 * The JSON texts the client sent for the long strings of a large body, by string: what the
 * provider adapters write upstream in place of escaping those strings again (json-pieces.ts).
 * Undefined for every other body.
 */
export function jsonTextsOf(body: unknown): ReadonlyMap<string, Uint8Array> | undefined {
  return typeof body === 'object' && body !== null ? (body as { [JSON_TEXTS]?: Map<string, Uint8Array> })[JSON_TEXTS] : undefined;
}

type BodyReply = { id: number } & ({ body: unknown; longs: LongString[] } | { error: { syntax?: string; deepAt?: string } });

/**
 * Shared buffers large bodies are gathered in, the two largest kept for the next bodies: memory
 * written once is written again at memcpy speed, where fresh memory costs ~3-4 ms per MiB on this
 * VM. Given up with the body thread.
 */
const gatherBuffers = bufferPool(2, (bytes) => new SharedArrayBuffer(bytes));

// Buffers, not bare Uint8Arrays: the reader looks for quotes with indexOf, which for a Buffer is
// memchr (0.13-0.26 ms over 8 MB here) and for a Uint8Array an element-by-element loop (4.4 ms).
const NO_BYTES = Buffer.from(new SharedArrayBuffer(0));

// Stopped a minute after its last body, with the buffers it keeps for the next one.
const bodyThread = new ThreadJobs<BodyReply>(threadEntry('json-body-thread', import.meta.url, 'cjs'), 'body-parsing', 60_000, {
  // The request waits for the thread to start.
  awaited: true,
});

/** Large bodies decided by reading them as they arrived, and by the body thread; tests read it. */
export const largeBodies = { readArriving: 0, byThread: 0 };

/**
 * Once a body of megabytes was answered, the counting thread starts (if it is not running), so
 * that its tables (~0.15-0.2 s to load) are ready for the next such prompt that needs a count; a
 * prompt that needs one before that starts it itself. Started when such a body's headers came,
 * it competed with the body's own arrival on two cores: `bench:huge`, 5 MiB of spaces and
 * newlines as a process's first huge prompt (refused on its floor, no count), ten alternated runs
 * each: decided in 76-141 ms (median 87) against 90-163 (median 136) at the headers and 84-144
 * (median 107) at the body's end. A prompt that fits only by its count, sent first, waits for the
 * thread's start instead (190-233 ms against 107-148): over the target either way.
 */
export function warmCountingAfter(request: FastifyRequest): void {
  // A body refused before it was read (over the limit, not JSON) is no prompt to count.
  if (Number(request.headers['content-length']) > LARGE_BODY && request.body !== undefined) startCounting();
}

/**
 * Where a large body's long literals are read to while it arrives (streamed-literals.ts): twice its
 * size, kept for the next body as the gathering buffers are.
 */
const literalBuffers = bufferPool(1, (bytes) => new ArrayBuffer(bytes));

let emptying: NodeJS.Timeout | undefined;

/** The buffers kept on this side go a minute after the last large body ended, failed or was given up. */
function emptyPoolsLater(): void {
  clearTimeout(emptying);
  emptying = setTimeout(() => {
    gatherBuffers.clear();
    literalBuffers.clear();
  }, 60_000).unref();
}

/**
 * A request body, parsed, read from its stream with Fastify's limits and errors (too large, length
 * not as announced). A small body is decoded and parsed here, at once. A large one never makes a
 * string of its size on the JavaScript heap (on this VM each step that makes a 5 MiB string takes
 * 15-25 ms, most of it the kernel handing over fresh memory): its bytes are gathered as they
 * arrive in a buffer shared with the body thread, and its long string literals are read from them
 * step by step meanwhile (streamed-literals.ts), leaving JSON.parse a few hundred bytes at the end.
 * A body that reading cannot decide (and one without a length) goes to the body thread, which
 * parses it there once it is complete and hands each long string back as bytes. Those become
 * strings kept outside the JavaScript heap (see `withLongStrings`). Invalid UTF-8 and a
 * byte-order mark are kept as Buffer.toString keeps them.
 */
export function readJsonBody(payload: Readable, limit: number, contentLength: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    if (contentLength > limit) return reject(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
    const chunks: Buffer[] = [];
    let received = 0;
    // Once the body is large: the shared buffer its bytes are gathered in, and what reads them as
    // they come, or its job on the body thread (started when it is known to be needed, so that it
    // is ready at the end), which reads the buffer only then.
    let gathered = NO_BYTES;
    let streamed: { reader: StreamedLiterals; out: ArrayBuffer } | null = null;
    let job: { id: number; reply: Promise<BodyReply> } | null = null;
    const gather = (chunk: Uint8Array, at: number) => {
      if (at + chunk.length > gathered.length) {
        // A body without a length, or longer than it said: twice the room, the bytes so far copied over.
        const grown = Buffer.from(gatherBuffers.take(Math.max(2 * gathered.length, at + chunk.length)));
        grown.set(gathered.subarray(0, at));
        if (gathered.length > 0) gatherBuffers.give(gathered.buffer);
        gathered = grown;
      }
      gathered.set(chunk, at);
    };
    const startGathering = (size: number) => {
      gathered = Buffer.from(gatherBuffers.take(size));
      let at = 0;
      for (const chunk of chunks.splice(0)) {
        gather(chunk, at);
        at += chunk.length;
      }
    };
    const stopReading = () => {
      if (streamed) literalBuffers.give(streamed.out);
      streamed = null;
    };
    /** `arriving`: the rest of the body is still to come, and the thread readies its buffers meanwhile. */
    const toThread = (arriving: boolean) => {
      stopReading();
      job = bodyThread.open();
      if (arriving) bodyThread.post({ expect: gathered.length });
    };
    const stop = (failed: boolean) => {
      payload.removeListener('data', onData);
      payload.removeListener('end', onEndListener);
      payload.removeListener('error', onError);
      if (failed && gathered.length > 0) {
        // The thread never saw the buffer: it is free at once.
        if (job) bodyThread.forget(job.id);
        stopReading();
        gatherBuffers.give(gathered.buffer);
        emptyPoolsLater();
      }
    };
    let ended = false;
    let reading: Promise<void> | null = null;
    /** Bytes gathered since the socket was last paused for a turn. */
    let sinceBreak = 0;
    /**
     * Reads what has arrived, in slices of the turns that follow (turn-slices.ts: a turn of the
     * socket's may hand over megabytes); settles once it has caught up. A body the reader gives up
     * on while it arrives goes to the body thread at once.
     */
    const catchUp = (): Promise<void> =>
      (reading ??= (async () => {
        while (streamed && !streamed.reader.failed && streamed.reader.position < received) {
          await nextSlice();
          try {
            // At least one step a slice; `streamed` is gone if the body failed meanwhile.
            while (streamed && !streamed.reader.failed && streamed.reader.position < received) {
              streamed.reader.advance(gathered, Math.min(received, streamed.reader.position + READ_STEP));
              if (sliceSpent()) break;
            }
          } catch {
            // A fault of the reader's own: the body thread decides (JSON.parse's answer, errors included).
            if (streamed) streamed.reader.failed = true;
          }
        }
        if (streamed?.reader.failed && !ended) toThread(true);
        reading = null;
      })());
    if (contentLength > LARGE_BODY) {
      startGathering(contentLength);
      const out = literalBuffers.take(2 * contentLength);
      streamed = { reader: new StreamedLiterals(out), out };
    }
    function onData(chunk: Buffer) {
      received += chunk.length;
      if (received > limit) {
        stop(true);
        return reject(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
      }
      if (gathered.length === 0) {
        chunks.push(chunk);
        // A chunked body announces no length: it moves to the thread once it is large.
        if (received > LARGE_BODY) {
          startGathering(2 * received);
          toThread(true);
        }
        return;
      }
      gather(chunk, received - chunk.length);
      if (streamed) void catchUp();
      // A turn's reads of the socket may hand over megabytes: past GATHER_STEP the rest waits for the next turn.
      sinceBreak += chunk.length;
      if (sinceBreak >= GATHER_STEP && !payload.isPaused()) {
        payload.pause();
        setImmediate(() => {
          sinceBreak = 0;
          payload.resume();
        });
      }
    }
    function onError(error: Error & { statusCode?: number }) {
      stop(true);
      if (!(typeof error.statusCode === 'number' && error.statusCode >= 400)) error.statusCode = 400;
      reject(error);
    }
    function onEndListener() {
      onEnd().catch(reject);
    }
    async function onEnd() {
      ended = true;
      const short = !Number.isNaN(contentLength) && received !== contentLength;
      stop(short);
      if (short) return reject(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
      if (gathered.length === 0) {
        try {
          return resolve(parseJsonBody(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, received).toString('utf8')));
        } catch (error) {
          return reject(error as Error);
        }
      }
      emptyPoolsLater();
      if (streamed) await catchUp();
      const read = streamed?.reader.finish(gathered, received, MAX_BODY_DEPTH);
      largeBodies[streamed && read ? 'readArriving' : 'byThread']++;
      if (streamed && read) {
        const { out } = streamed;
        streamed = null;
        if ('deepAt' in read) {
          literalBuffers.give(out);
          gatherBuffers.give(gathered.buffer);
          return reject(tooDeep(read.deepAt, MAX_BODY_DEPTH));
        }
        // The literals' JSON texts are views of the gathered bytes: that buffer stays with the body.
        const done = withLongStrings(read.body, read.longs, () => {});
        done.finally(() => literalBuffers.give(out)).catch(() => {});
        return done.then(resolve, reject);
      }
      if (!job) toThread(false);
      const shared = gathered.buffer;
      bodyThread.post({ id: job!.id, end: true, bytes: shared, length: received, maxDepth: MAX_BODY_DEPTH });
      // The thread has read the buffer once it answers: the next body may gather in it.
      job!.reply.finally(() => gatherBuffers.give(shared)).catch(() => {});
      job!.reply.then((reply) => {
        if ('error' in reply)
          return reject(reply.error.deepAt === undefined ? new SyntaxError(reply.error.syntax) : tooDeep(reply.error.deepAt, MAX_BODY_DEPTH));
        withLongStrings(reply.body, reply.longs, (buffer) => bodyThread.post({ recycle: buffer }, [buffer as ArrayBuffer])).then(resolve, reject);
      }, reject);
    }
    payload.on('data', onData);
    payload.on('end', onEndListener);
    payload.on('error', onError);
  });
}

/** Bytes of a large body read in one step as it arrives. */
const READ_STEP = 128 * 1024;
/** Bytes of a large body gathered from its socket in one turn of the event loop, about. */
const GATHER_STEP = 512 * 1024;

/**
 * Puts the long strings back where they were read from (each one's bytes then given to `recycle`). Each string of a megabyte or
 * more is made by Buffer.toString as an external string: its characters are copied into memory
 * from the C allocator, which keeps freed blocks for the next body, where the JavaScript heap
 * would take fresh pages from the kernel for each one.
 */
async function withLongStrings(body: unknown, longs: LongString[], recycle: (buffer: ArrayBufferLike) => void): Promise<unknown> {
  const texts = new Map<string, Uint8Array>();
  // Not enumerable: never serialized, never walked.
  if (typeof body === 'object' && body !== null) Object.defineProperty(body, JSON_TEXTS, { value: texts });
  for (const { path, bytes, latin1, json } of longs) {
    // Each string (a few milliseconds for megabytes) starts a slice, not the end of one.
    if (sliceSpent()) await nextSlice();
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString(latin1 ? 'latin1' : 'utf16le');
    // The string is a copy: its bytes' buffer may be used again.
    recycle(bytes.buffer);
    if (path.length === 0) return text;
    if (json) texts.set(text, json);
    let container = body as Record<string | number, unknown>;
    for (const key of path.slice(0, -1)) container = container[key] as Record<string | number, unknown>;
    // Defined, not assigned: a key named __proto__ is an own property of a parsed body.
    Object.defineProperty(container, path.at(-1)!, { value: text });
  }
  return body;
}

/**
 * The body parser of every route and content type: JSON, read by `readJsonBody`; empty is
 * undefined, too deep is invalid_request.
 */
export function jsonBodyParser(limit: number) {
  return (request: FastifyRequest, payload: Readable, done: (error: Error | null, body?: unknown) => void) => {
    readJsonBody(payload, limit, Number(request.headers['content-length'])).then(
      (body) => done(null, body),
      (error: Error) => done(error, undefined),
    );
  };
}
