import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { readBodyText } from './parse-json-body.ts';

/** `bytes` as a request stream delivers them: in chunks of `size`. */
const streamOf = (bytes: Buffer, size = 65_536) =>
  Readable.from(Array.from({ length: Math.ceil(bytes.length / size) }, (_, index) => bytes.subarray(index * size, (index + 1) * size)));

test('a large body is decoded chunk by chunk exactly as Buffer.toString decodes it whole', async () => {
  // Multi-byte characters straddle chunk boundaries; a BOM and invalid bytes are kept.
  const bytes = Buffer.concat([
    Buffer.from([0xef, 0xbb, 0xbf]),
    Buffer.from('漢😀é'.repeat(120_000)),
    Buffer.from([0xff, 0xc3, 0x28, 0xe2, 0x82]),
    Buffer.from('end'),
  ]);
  assert.ok(bytes.length > 1024 * 1024);
  for (const size of [65_536, 1_000, 7]) assert.equal(await readBodyText(streamOf(bytes, size), 8 << 20, bytes.length), bytes.toString('utf8'));
  const small = Buffer.from('{"small":"é"}');
  assert.equal(await readBodyText(streamOf(small, 5), 8 << 20, small.length), '{"small":"é"}');
});

test('a body past the limit, or not as long as announced, is refused with Fastify’s errors', async () => {
  const bytes = Buffer.alloc(300_000, 0x61);
  const refusal = (promise: Promise<string>) =>
    promise.then(
      () => 'read',
      (error: { code: string }) => error.code,
    );
  assert.equal(await refusal(readBodyText(streamOf(bytes), 100_000, bytes.length)), 'FST_ERR_CTP_BODY_TOO_LARGE');
  // A chunked body announces no length: the limit applies as it arrives.
  assert.equal(await refusal(readBodyText(streamOf(bytes), 100_000, NaN)), 'FST_ERR_CTP_BODY_TOO_LARGE');
  assert.equal(await refusal(readBodyText(streamOf(bytes), 1_000_000, bytes.length + 1)), 'FST_ERR_CTP_INVALID_CONTENT_LENGTH');
  assert.equal(await refusal(readBodyText(streamOf(bytes), 1_000_000, NaN)), 'read');
});
