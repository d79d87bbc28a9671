import { GatewayError } from '../errors/gateway-error.ts';

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

/** Bytes of a body decoded between two turns of the event loop. */
const DECODE_SLICE = 256 * 1024;

/**
 * A request body as text. A large one is decoded a slice at a time, giving the event loop back
 * between slices: decoding 5 MiB of CJK at once holds it for ~20 ms. Invalid UTF-8 and a
 * byte-order mark are kept as Buffer.toString keeps them.
 */
export async function decodeBody(body: Buffer): Promise<string> {
  if (body.length <= DECODE_SLICE) return body.toString('utf8');
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  const parts: string[] = [];
  for (let start = 0; start < body.length; start += DECODE_SLICE) {
    parts.push(decoder.decode(body.subarray(start, start + DECODE_SLICE), { stream: true }));
    await new Promise((resolve) => setImmediate(resolve));
  }
  parts.push(decoder.decode());
  return parts.join('');
}

/** JSON body parser of every route: empty is undefined, too deep is invalid_request. */
export function parseJsonBody(text: string): unknown {
  if (text === '') return undefined;
  const body: unknown = JSON.parse(text);
  assertBodyDepth(body);
  return body;
}
