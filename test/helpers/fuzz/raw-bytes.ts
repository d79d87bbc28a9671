import fc from 'fast-check';
import { chatBody } from './chat-bodies.ts';

/** Requests broken below HTTP, written as bytes: what node:http would refuse to send. */

/** Any byte but CR and LF, for request lines and header lines node:http would refuse to send. */
const byteChar = fc
  .integer({ min: 0, max: 0xff })
  .filter((code) => code !== 10 && code !== 13)
  .map((code) => String.fromCharCode(code));

export interface RawBytesCase {
  method: string;
  target: string;
  version: string;
  headers: string[];
  framing: 'length' | 'none' | 'not-a-number' | 'negative' | 'two-lengths' | 'chunked' | 'bad-chunk' | 'chunked-and-length' | 'length-too-long';
  body: string;
  lineEnd: string;
  oversizedHeader: boolean;
  pipelined: boolean;
}

/** Requests broken at the HTTP level: request line, header syntax, framing, size, pipelining. */
export const rawBytesCase: fc.Arbitrary<RawBytesCase> = fc.record({
  method: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'HEAD') },
    { weight: 1, arbitrary: fc.string({ unit: byteChar, maxLength: 8 }) },
  ),
  target: fc.oneof(
    {
      weight: 6,
      arbitrary: fc.constantFrom(
        '/v1/chat/completions',
        '/v1/messages',
        '/v1/models',
        '/v1/receipts?limit=2',
        '/v1/fix/quote',
        '/health',
        '*',
        'http://x/v1/models',
      ),
    },
    { weight: 2, arbitrary: fc.string({ unit: byteChar, maxLength: 40 }).map((text) => `/v1/${text}`) },
  ),
  version: fc.oneof(
    { weight: 8, arbitrary: fc.constant('HTTP/1.1') },
    { weight: 1, arbitrary: fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/9.9', 'http/1.1', '', 'HTTP/1.1 x') },
  ),
  headers: fc.array(
    fc.oneof(
      {
        weight: 3,
        arbitrary: fc.constantFrom(
          'content-type: application/json',
          'anthropic-version: 2023-06-01',
          'accept: */*',
          'expect: 100-continue',
          'connection: keep-alive',
        ),
      },
      {
        weight: 2,
        arbitrary: fc
          .tuple(fc.stringMatching(/^[a-z-]{1,12}$/), fc.string({ unit: byteChar, maxLength: 30 }))
          .map(([name, value]) => `${name}: ${value}`),
      },
      { weight: 1, arbitrary: fc.string({ unit: byteChar, maxLength: 30 }) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          ' folded: continuation',
          'no-colon',
          ': empty-name',
          'host: other.example',
          'host:',
          'transfer-encoding: gzip, chunked',
        ),
      },
    ),
    { maxLength: 4 },
  ),
  framing: fc.constantFrom(
    'length',
    'length',
    'length',
    'none',
    'not-a-number',
    'negative',
    'two-lengths',
    'chunked',
    'bad-chunk',
    'chunked-and-length',
    'length-too-long',
  ),
  body: fc.oneof(
    chatBody.map((body) => JSON.stringify(body)),
    fc.string({ unit: byteChar, maxLength: 60 }),
  ),
  lineEnd: fc.constantFrom('\r\n', '\r\n', '\r\n', '\n'),
  oversizedHeader: fc.oneof({ weight: 12, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  pipelined: fc.boolean(),
});

/** The bytes of a broken request; `key` is a live key, so that what gets past HTTP meets the gateway. */
export function rawBytesOf(rawCase: RawBytesCase, host: string, key: string): Buffer {
  const body = Buffer.from(rawCase.body, 'latin1');
  const framing: Record<RawBytesCase['framing'], { headers: string[]; body: string }> = {
    length: { headers: [`content-length: ${body.length}`], body: rawCase.body },
    none: { headers: [], body: rawCase.body },
    'not-a-number': { headers: ['content-length: 12abc'], body: rawCase.body },
    negative: { headers: ['content-length: -1'], body: rawCase.body },
    'two-lengths': { headers: [`content-length: ${body.length}`, `content-length: ${body.length + 1}`], body: rawCase.body },
    chunked: { headers: ['transfer-encoding: chunked'], body: `${body.length.toString(16)}\r\n${rawCase.body}\r\n0\r\n\r\n` },
    'bad-chunk': { headers: ['transfer-encoding: chunked'], body: `zz\r\n${rawCase.body}\r\n0\r\n\r\n` },
    'chunked-and-length': { headers: ['transfer-encoding: chunked', `content-length: ${body.length}`], body: `0\r\n\r\n${rawCase.body}` },
    // The server waits for bytes that never come, until the client closes its side.
    'length-too-long': { headers: [`content-length: ${body.length + 10}`], body: rawCase.body },
  };
  const { headers, body: payload } = framing[rawCase.framing];
  const lines = [
    `${rawCase.method} ${rawCase.target} ${rawCase.version}`.trimEnd(),
    `host: ${host}`,
    `authorization: Bearer ${key}`,
    ...rawCase.headers,
    ...headers,
    ...(rawCase.oversizedHeader ? [`x-padding: ${'p'.repeat(20_000)}`] : []),
    ...(rawCase.pipelined ? [] : ['connection: close']),
  ];
  const request = `${lines.join(rawCase.lineEnd)}${rawCase.lineEnd}${rawCase.lineEnd}${payload}`;
  // Pipelined: a second, broken request right behind the first on the same connection.
  return Buffer.from(rawCase.pipelined ? `${request}GARBAGE \u0001\r\n\r\n` : request, 'latin1');
}
