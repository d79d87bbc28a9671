import type { Readable } from 'node:stream';
import { errorCodes, type FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/gateway-error.ts';
import { startCounting } from '../protocol/canonical/text-token-count.ts';

/** Deeper than any real tool schema or message; deeper bodies would exhaust recursive readers (JSON.stringify). */
export const MAX_BODY_DEPTH = 64;

interface Frame {
  value: unknown;
  depth: number;
  parent: Frame | null;
  key: string | number | null;
}

function pathOf(frame: Frame): string {
  const keys: Array<string | number> = [];
  for (let at: Frame | null = frame; at?.key !== null && at; at = at.parent) keys.unshift(at.key!);
  return keys.reduce<string>((path, key) => (typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key), '') || 'the body';
}

/**
 * Refuse a body nested deeper than MAX_BODY_DEPTH, naming where: walked iteratively, so the
 * check itself cannot overflow the stack whatever the nesting.
 */
export function assertBodyDepth(body: unknown, maxDepth = MAX_BODY_DEPTH): void {
  if (typeof body !== 'object' || body === null) return;
  // Only containers go on the stack: strings and numbers, most of a body, cost nothing here.
  const stack: Frame[] = [{ value: body, depth: 0, parent: null, key: null }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.depth >= maxDepth) {
      const path = pathOf(frame);
      throw new GatewayError('invalid_request', `${path} nests deeper than ${maxDepth} levels.`, {}, path);
    }
    const container = frame.value as Record<string, unknown>;
    const isArray = Array.isArray(container);
    for (const key in container) {
      const child = container[key];
      if (typeof child === 'object' && child !== null) {
        stack.push({ value: child, depth: frame.depth + 1, parent: frame, key: isArray ? Number(key) : key });
      }
    }
  }
}

/** Bodies up to this size are read whole and decoded at once, as Fastify does. */
const SMALL_BODY = 256 * 1024;

/** Bodies above this size start the token-counting thread as they arrive. */
const LARGE_BODY = 1024 * 1024;

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * A request body as text, read from its stream with Fastify's limits and errors (too large, length
 * not as announced). A large one never holds the event loop for more than one step of its size:
 * each chunk is decoded as it arrives, the pieces are joined into one string in a turn of their
 * own, and JSON.parse runs in the next (on this VM each step that makes a 5 MiB string takes
 * ~15-25 ms, most of it the kernel handing over fresh memory). Invalid UTF-8 and a byte-order mark
 * are kept as Buffer.toString keeps them.
 */
export function readBodyText(payload: Readable, limit: number, contentLength: number): Promise<string> {
  return new Promise((resolve, reject) => {
    if (contentLength > limit) return reject(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
    const small = contentLength <= SMALL_BODY;
    // A prompt of megabytes may need counting: the counting thread loads its tables while it arrives.
    if (contentLength > LARGE_BODY) startCounting();
    const chunks: Buffer[] = [];
    const decoder = small ? null : new TextDecoder('utf-8', { ignoreBOM: true });
    const parts: string[] = [];
    let received = 0;
    const stop = () => {
      payload.removeListener('data', onData);
      payload.removeListener('end', onEnd);
      payload.removeListener('error', onError);
    };
    function onData(chunk: Buffer) {
      received += chunk.length;
      if (received > limit) {
        stop();
        return reject(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
      }
      if (decoder) parts.push(decoder.decode(chunk, { stream: true }));
      else chunks.push(chunk);
    }
    function onError(error: Error & { statusCode?: number }) {
      stop();
      if (!(typeof error.statusCode === 'number' && error.statusCode >= 400)) error.statusCode = 400;
      reject(error);
    }
    function onEnd() {
      stop();
      if (!Number.isNaN(contentLength) && received !== contentLength) return reject(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
      if (!decoder) return resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, received).toString('utf8'));
      parts.push(decoder.decode());
      // join makes one flat string (JSON.parse of the pieces would flatten them itself, in its own block).
      const joined = parts.join('');
      void nextTurn().then(() => resolve(joined));
    }
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onError);
  });
}

/**
 * The body parser of every route and content type: JSON, read by `readBodyText`; empty is
 * undefined, too deep is invalid_request.
 */
export function jsonBodyParser(limit: number) {
  return (request: FastifyRequest, payload: Readable, done: (error: Error | null, body?: unknown) => void) => {
    readBodyText(payload, limit, Number(request.headers['content-length'])).then(
      (text) => {
        let parsed: unknown;
        try {
          parsed = parseJsonBody(text);
        } catch (error) {
          return done(error as Error, undefined);
        }
        done(null, parsed);
      },
      (error: Error) => done(error, undefined),
    );
  };
}

/** JSON body parser of every route: empty is undefined, too deep is invalid_request. */
export function parseJsonBody(text: string): unknown {
  if (text === '') return undefined;
  const body: unknown = JSON.parse(text);
  assertBodyDepth(body);
  return body;
}
