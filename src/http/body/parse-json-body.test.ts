import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { jsonPieces } from '../../lib/json-pieces.ts';
import { jsonTextsOf, LARGE_BODY, readJsonBody } from './parse-json-body.ts';

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
        // Each long string's JSON text, as the client wrote it, serializes the body again to its value.
        for (const [value, json] of jsonTextsOf(got.value) ?? []) {
          assert.equal(JSON.parse(Buffer.from(json).toString('utf8')), value);
          assert.ok(bytes.includes(Buffer.from(json)), 'the bytes of its literal in the body');
        }
        const { pieces } = await jsonPieces(got.value, jsonTextsOf(got.value));
        assert.deepEqual(JSON.parse(Buffer.concat(pieces.map((piece) => Buffer.from(piece))).toString('utf8')), got.value);
      }
    }
  }
});

test('a large body keeps the JSON text of its long valid UTF-8 literals, which is what goes upstream', async () => {
  const escaped = ' \\n'.repeat(150_000);
  const wide = '漢\\u0041😀'.repeat(20_000);
  const body = Buffer.concat([
    Buffer.from(`{"messages":[{"content":"${escaped}"},{"content":"${wide}"},{"content":"`),
    Buffer.from('é'.repeat(40_000)),
    Buffer.from([0xff]),
    Buffer.from(`"}],"pad":"${' '.repeat(LARGE_BODY)}"}`),
  ]);
  const parsed = (await readJsonBody(streamOf(body), 8 << 20, body.length)) as { messages: Array<{ content: string }> };
  const texts = jsonTextsOf(parsed)!;
  const [spaces, mixed, invalid] = parsed.messages.map((message) => message.content);
  assert.equal(Buffer.from(texts.get(spaces!)!).toString(), `"${escaped}"`);
  assert.equal(Buffer.from(texts.get(mixed!)!).toString(), `"${wide}"`);
  assert.equal(texts.has(invalid!), false, 'invalid UTF-8 is replaced, so its literal is not its text');
  assert.ok(texts.has(' '.repeat(LARGE_BODY)));
  const { pieces, bytes } = await jsonPieces({ model: 'm', messages: parsed.messages }, texts);
  const sent = Buffer.concat(pieces.map((piece) => Buffer.from(piece)));
  assert.equal(bytes, sent.length);
  assert.ok(sent.includes(`"${escaped}"`) && sent.includes(`"${wide}"`), 'written as the client wrote them');
  assert.deepEqual(JSON.parse(sent.toString('utf8')), { model: 'm', messages: parsed.messages });
  // A small body, parsed here, has none.
  assert.equal(jsonTextsOf(await readJsonBody(streamOf(Buffer.from('{"a":"b"}')), 1024, 9)), undefined);
});

test('a large body that has all arrived is gathered a part a turn, not in one turn', async () => {
  const text = Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: 'x'.repeat(4 * LARGE_BODY) }] }));
  // Every chunk is in the stream's buffer before reading starts, as when a socket read megabytes at once.
  const payload = new Readable({ read() {} });
  for (let at = 0; at < text.length; at += 65_536) payload.push(text.subarray(at, at + 65_536));
  payload.push(null);
  let turn = 0;
  let chunksThisTurn = 0;
  let mostInATurn = 0;
  let reading = true;
  const tick = () => {
    turn++;
    chunksThisTurn = 0;
    if (reading) setImmediate(tick);
  };
  setImmediate(tick);
  payload.on('data', () => {
    chunksThisTurn++;
    mostInATurn = Math.max(mostInATurn, chunksThisTurn);
  });
  const body = (await readJsonBody(payload, 8 << 20, text.length)) as { messages: Array<{ content: string }> };
  reading = false;
  assert.equal(body.messages[0]!.content.length, 4 * LARGE_BODY);
  // 4 MiB in 64 KiB chunks: at most about half a megabyte a turn (8 chunks, and the one that crossed it).
  assert.ok(mostInATurn <= 9, `${mostInATurn} chunks in one turn, over ${turn} turns`);
});
