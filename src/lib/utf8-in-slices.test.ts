import assert from 'node:assert/strict';
import { test } from 'node:test';
import { utf8InSlices } from './utf8-in-slices.ts';

test('a long text is encoded in slices exactly as Buffer.from encodes it whole; a short one is left as text', async () => {
  // Surrogate pairs straddle every slice boundary after the leading 'a'; a lone surrogate stays U+FFFD.
  for (const text of ['a' + '😀'.repeat(100_000), '漢é'.repeat(70_000) + '\ud800' + 'end', 'x'.repeat(200_000)]) {
    const encoded = await utf8InSlices(text);
    assert.ok(Buffer.isBuffer(encoded));
    assert.ok(encoded.equals(Buffer.from(text)), 'same bytes');
  }
  assert.equal(await utf8InSlices('{"short":true}'), '{"short":true}');
});
