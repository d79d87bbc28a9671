import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeBody } from './parse-json-body.ts';

test('a large body is decoded in slices exactly as Buffer.toString decodes it whole', async () => {
  // Multi-byte characters straddle every 256 KiB slice boundary; a BOM and invalid bytes are kept.
  const bytes = Buffer.concat([
    Buffer.from([0xef, 0xbb, 0xbf]),
    Buffer.from('漢😀é'.repeat(120_000)),
    Buffer.from([0xff, 0xc3, 0x28, 0xe2, 0x82]),
    Buffer.from('end'),
  ]);
  assert.ok(bytes.length > 1024 * 1024);
  assert.equal(await decodeBody(bytes), bytes.toString('utf8'));
  assert.equal(await decodeBody(Buffer.from('{"small":true}')), '{"small":true}');
});
