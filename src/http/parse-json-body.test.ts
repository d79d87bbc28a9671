import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { LARGE_BODY, readJsonBody } from './parse-json-body.ts';

/** `bytes` as a request stream delivers them: in chunks of `size`. */
const streamOf = (bytes: Buffer, size = 65_536) =>
  Readable.from(Array.from({ length: Math.ceil(bytes.length / size) }, (_, index) => bytes.subarray(index * size, (index + 1) * size)));

const outcome = (promise: Promise<unknown>) =>
  promise.then(
    () => 'read',
    (error: { code?: string; name: string }) => error.code ?? error.name,
  );

test('a large body is parsed on the body thread exactly as JSON.parse parses it whole', async () => {
  // Multi-byte characters straddle chunk boundaries; invalid bytes and lone surrogates are kept;
  // long strings come back as one-byte and two-byte text, at the root and under __proto__.
  const text = Buffer.concat([
    Buffer.from('{"messages":[{"content":"'),
    Buffer.from('漢😀é'.repeat(120_000)),
    Buffer.from([0xff, 0xc3, 0x28, 0xe2, 0x82]),
    Buffer.from(`\\ud800 end"},{"content":"${'é'.repeat(70_000)}","n":[1,2.5,null,true]}],"__proto__":{"x":"${'a'.repeat(70_000)}"},"short":"ok"}`),
  ]);
  assert.ok(text.length > LARGE_BODY);
  const expected = JSON.parse(text.toString('utf8'));
  for (const size of [65_536, 1_000, 7]) {
    assert.deepEqual(await readJsonBody(streamOf(text, size), 8 << 20, text.length), expected);
  }
  // A chunked body announces no length: it moves to the thread once it is large.
  const parsed = (await readJsonBody(streamOf(text), 8 << 20, NaN)) as Record<string, any>;
  assert.deepEqual(parsed, expected);
  assert.equal(Object.getPrototypeOf(parsed), Object.prototype, 'a __proto__ key stays a key');
  assert.equal(parsed['__proto__'].x.length, 70_000);

  const root = Buffer.from(JSON.stringify('ä'.repeat(LARGE_BODY)));
  assert.equal(await readJsonBody(streamOf(root), 8 << 20, root.length), 'ä'.repeat(LARGE_BODY));
});

test('a large body that is not JSON, or nests too deep, is refused as a small one is', async () => {
  const filler = 'x'.repeat(LARGE_BODY);
  for (const [body, expected] of [
    [`\ufeff{"a":"${filler}"}`, 'SyntaxError'],
    [`{"a":"${filler}"`, 'SyntaxError'],
    [`{"a":"${filler}","b":${'['.repeat(70)}${']'.repeat(70)}}`, 'invalid_request'],
  ]) {
    const bytes = Buffer.from(body!);
    const small = Buffer.from(body!.replace(filler, 'x'));
    assert.equal(await outcome(readJsonBody(streamOf(bytes), 8 << 20, bytes.length)), expected);
    assert.equal(await outcome(readJsonBody(streamOf(small), 8 << 20, small.length)), expected);
  }
  const deep = Buffer.from(`{"a":"${filler}","b":{"c":${'['.repeat(70)}${']'.repeat(70)}}}`);
  await assert.rejects(readJsonBody(streamOf(deep), 8 << 20, deep.length), { message: /^b\.c(\[0\])+ nests deeper than 64 levels\.$/ });
});

test('a body past the limit, or not as long as announced, is refused with Fastify’s errors', async () => {
  for (const size of [300_000, 2 * LARGE_BODY]) {
    const bytes = Buffer.from(JSON.stringify({ a: 'a'.repeat(size) }));
    assert.equal(await outcome(readJsonBody(streamOf(bytes), size / 2, bytes.length)), 'FST_ERR_CTP_BODY_TOO_LARGE');
    assert.equal(await outcome(readJsonBody(streamOf(bytes), size / 2, NaN)), 'FST_ERR_CTP_BODY_TOO_LARGE');
    assert.equal(await outcome(readJsonBody(streamOf(bytes), 8 << 20, bytes.length + 1)), 'FST_ERR_CTP_INVALID_CONTENT_LENGTH');
    assert.equal(await outcome(readJsonBody(streamOf(bytes), 8 << 20, NaN)), 'read');
  }
});
