import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';

/** One request as a fuzzer builds it: header lines in order (repeats stay separate lines), any body bytes. */
export interface RawRequest {
  method: string;
  /** Path and query as sent on the request line. */
  path: string;
  headers: Array<[string, string]>;
  body?: string | Uint8Array;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * Send a request with node:http, which keeps repeated header lines apart (fetch joins them) and
 * sends latin-1 bytes in paths and header values as they are. One connection per request, so a
 * request's answer never depends on what an earlier one left on the connection.
 */
export function sendHttp(baseUrl: string, raw: RawRequest, timeoutMs = 15_000): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const body = raw.body === undefined ? undefined : Buffer.from(raw.body);
  // As a flat list, repeated headers stay apart; node:http then adds neither Host nor, on a GET, the body's length.
  const headers = [['host', url.host], ...(body ? [['content-length', String(body.length)]] : []), ...raw.headers].flat();
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: url.hostname, port: url.port, method: raw.method, path: raw.path, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
      response.on('error', reject);
    });
    request.setTimeout(timeoutMs, () => request.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    request.on('error', reject);
    request.end(body);
  });
}

/**
 * The bytes node:http would send for `raw`, on a connection the server closes after answering.
 * For a HEAD the server could not read, whose answer carries a body node:http's client refuses.
 */
export function requestBytes(baseUrl: string, raw: RawRequest): Buffer {
  const body = raw.body === undefined ? Buffer.alloc(0) : Buffer.from(raw.body);
  const headers: Array<[string, string]> = [['host', new URL(baseUrl).host], ['connection', 'close'], ...raw.headers];
  if (raw.body !== undefined) headers.push(['content-length', String(body.length)]);
  const head = `${raw.method} ${raw.path} HTTP/1.1\r\n${headers.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

/** The length of a chunked body at the start of `text`, and its decoded bytes; null when it is cut short. */
function dechunk(text: string): { body: string; length: number } | null {
  let body = '';
  let at = 0;
  for (;;) {
    const lineEnd = text.indexOf('\r\n', at);
    if (lineEnd === -1) return null;
    const size = parseInt(text.slice(at, lineEnd), 16);
    if (!(size >= 0)) return null;
    if (size === 0) return { body, length: text.indexOf('\r\n\r\n', lineEnd) === lineEnd ? lineEnd + 4 : lineEnd + 2 };
    body += text.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
}

/**
 * Every response in `text` (latin-1), interim 1xx ones left out; the last runs to the end when
 * its length is unknown. The first has no body when it answers a HEAD.
 */
function parseResponses(text: string, firstIsHead: boolean): RawResponse[] {
  const responses: RawResponse[] = [];
  let rest = text;
  while (rest !== '') {
    if (!rest.startsWith('HTTP/')) {
      responses.push({ status: 0, headers: {}, body: rest });
      break;
    }
    const split = rest.indexOf('\r\n\r\n');
    const head = split === -1 ? rest : rest.slice(0, split);
    const [statusLine, ...lines] = head.split('\r\n');
    const headers: IncomingHttpHeaders = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0);
    const afterHead = split === -1 ? '' : rest.slice(split + 4);
    let body = afterHead;
    let used = afterHead.length;
    // A HEAD the server could read gets no body; one it could not read may (the server did not know it was a HEAD).
    const headWithoutBody = firstIsHead && responses.length === 0 && (afterHead === '' || afterHead.startsWith('HTTP/'));
    if ((status >= 100 && status < 200) || headWithoutBody) {
      body = '';
      used = 0;
    } else if (headers['transfer-encoding'] === 'chunked') {
      const chunked = dechunk(afterHead);
      if (chunked) ({ body, length: used } = chunked);
    } else if (headers['content-length'] !== undefined) {
      used = Math.min(afterHead.length, Number(headers['content-length']));
      body = afterHead.slice(0, used);
    }
    if (status < 100 || status >= 200) responses.push({ status, headers, body: Buffer.from(body, 'latin1').toString('utf8') });
    rest = afterHead.slice(used);
  }
  return responses;
}

/**
 * Write request bytes on a fresh TCP connection and read until the server closes it: for
 * requests node:http refuses to send (control bytes, broken framing, a header section too large).
 * Every response the server wrote, in order (none when it closed without a word).
 */
export function sendRawBytes(
  baseUrl: string,
  bytes: Uint8Array,
  options: { firstIsHead?: boolean; timeoutMs?: number } = {},
): Promise<RawResponse[]> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error(`the connection stayed open ${timeoutMs} ms`)), timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // The server may close while the request is still being written; what it answered is what counts.
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' || error.code === 'EPIPE' ? undefined : reject(error)));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(parseResponses(Buffer.concat(chunks).toString('latin1'), options.firstIsHead === true));
    });
    socket.on('connect', () => socket.end(Buffer.from(bytes)));
  });
}

/**
 * Write request bytes on a fresh connection without ending our side, and read until the server
 * closes it (send `connection: close`): what a client waiting for its answer sees. A server may
 * drop a request whose client half-closed before the answer, as `sendRawBytes` does.
 */
export function sendRawAndWait(baseUrl: string, bytes: Uint8Array, timeoutMs = 5_000): Promise<RawResponse[]> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) }, () => socket.write(bytes));
    const pieces: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error(`the connection stayed open ${timeoutMs} ms`)), timeoutMs);
    socket.on('data', (piece: Buffer) => pieces.push(piece));
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' || error.code === 'EPIPE' ? undefined : reject(error)));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(parseResponses(Buffer.concat(pieces).toString('latin1'), false));
    });
  });
}
