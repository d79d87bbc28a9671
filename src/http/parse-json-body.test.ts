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
  // Without a length, the room it is gathered in grows as it arrives (here from 2 MiB to 8).
  const grows = Buffer.from(JSON.stringify({ a: 'b'.repeat(6 * LARGE_BODY), c: 'ü'.repeat(LARGE_BODY / 2) }));
  assert.deepEqual(await readJsonBody(streamOf(grows), 8 << 20, NaN), { a: 'b'.repeat(6 * LARGE_BODY), c: 'ü'.repeat(LARGE_BODY / 2) });
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
  // In a long array (walked by index), the index is named.
  const numbers = Array.from({ length: 200_000 }, (_, index) => index).join(',');
  const deepInArray = Buffer.from(`{"a":[${numbers},{"b":${'['.repeat(70)}${']'.repeat(70)}}]}`);
  await assert.rejects(readJsonBody(streamOf(deepInArray), 8 << 20, deepInArray.length), {
    message: /^a\[200000\]\.b(\[0\])+ nests deeper than 64 levels\.$/,
  });
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

test('long string literals, read from their bytes on the body thread, come out as JSON.parse makes them, or fail as it fails', async () => {
  const long = (text: string) => text.repeat(Math.ceil(70_000 / text.length));
  const numbers = `[${Array.from({ length: 30_000 }, (_, index) => index).join(',')}]`;
  const bodies = [
    // Every escape, in one-byte text, then past U+00FF (two-byte text), lone surrogates kept.
    `{"a":"${long('x\\n\\t\\"\\\\\\/\\b\\f\\r\\u0041\\u00e9 ')}"}`,
    `{"a":"${long('x\\u20ac\\ud800\\udc00\\uDFFF\\u00E9 ')}","b":"${long('y')}"}`,
    `{"a":"${long('漢\\n😀\\u0041\\"é')}"}`,
    // Backslashes before a closing quote, an even run; quotes escaped inside.
    `["${long('\\"q\\"')}\\\\\\\\","${long('z')}"]`,
    `"${long('root\\n')}"`,
    // A long key; duplicate keys, the last one winning; a long __proto__ value.
    `{"${long('k')}":1,"${long('k')}x":"${long('v')}"}`,
    `{"a":"${long('first')}","a":"${long('second')}","b":"${long('third')}","b":2}`,
    `{"__proto__":"${long('p')}","x":{"__proto__":["${long('q')}"]}}`,
    // Long runs without quotes outside strings: numbers between strings, at the start.
    `{"s":"x","n":${numbers},"t":"${long('y')}"}`,
    `[${numbers},"${long('w')}"]`,
    // Refused as JSON.parse refuses them: a raw control character, bad escapes, unterminated, a syntax error after.
    `{"a":"${long('x')}\n${long('y')}"}`,
    `{"a":"${long('x')}\\x"}`,
    `{"a":"${long('x')}\\u12G4"}`,
    `{"a":"${long('x')}\\u12"}`,
    `{"a":"${long('x')}`,
    `{"a":"${long('x')}" "b":1}`,
    `{"a":"${long('x')}"}}`,
    // Refused for its syntax, not its depth.
    `{"a":"${long('x\t')}","b":${'['.repeat(70)}${']'.repeat(70)}}`,
  ].map((text) => Buffer.from(`${text}${' '.repeat(LARGE_BODY)}`));
  // Invalid UTF-8 beside escapes; a byte-order mark before a long literal.
  bodies.push(
    Buffer.concat([Buffer.from(`{"a":"${long('é\\n')}`), Buffer.from([0xed, 0xa0, 0x80, 0xc3]), Buffer.from(`\\u0041${' '.repeat(LARGE_BODY)}"}`)]),
  );
  bodies.push(Buffer.from(`\ufeff"${long('x').repeat(16)}"`));
  for (const bytes of bodies) {
    let expected: unknown;
    try {
      expected = { value: JSON.parse(bytes.toString('utf8')) };
    } catch (error) {
      expected = { error: (error as Error).message };
    }
    for (const size of [65_536, 4_099]) {
      const got = await readJsonBody(streamOf(bytes, size), 8 << 20, bytes.length).then(
        (value) => ({ value }),
        (error: Error) => ({ error: error.message }),
      );
      assert.deepEqual(got, expected, bytes.subarray(0, 60).toString());
      if ('value' in got && typeof got.value === 'object' && got.value !== null) {
        assert.equal(Object.getPrototypeOf(got.value), Array.isArray(got.value) ? Array.prototype : Object.prototype);
      }
    }
  }
});
