import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import fc from 'fast-check';
import { REFUSED_LITERAL_PIECES, VALID_LITERAL_PIECES } from '../../../test/helpers/json-literal-pieces.ts';
import { jsonPieces } from '../../lib/json-pieces.ts';
import { jsonTextsOf, LARGE_BODY, largeBodies, readJsonBody } from './parse-json-body.ts';

/**
 * Bodies over a megabyte are parsed on the body thread, which reads long string literals straight
 * from the bytes and gives JSON.parse only the rest. Whatever the bytes, the answer must be
 * JSON.parse's own for the body decoded as UTF-8: the same value, or the same error. Random
 * bodies here mix long literals of every kind of text (escapes, multi-byte characters, lone
 * surrogates, invalid bytes, raw control characters, bad escapes) with keys, arrays, numbers and
 * syntax errors. FUZZ_SEED and FUZZ_RUNS as in test/fuzz-endpoints.test.ts.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 1313);
const RUNS = Number(process.env.FUZZ_RUNS ?? 40);

/** Pieces of a string literal's text as it appears between its quotes (some of them invalid). */
const literalPiece = fc.constantFrom(...VALID_LITERAL_PIECES, ...REFUSED_LITERAL_PIECES);

/** Raw bytes that are not UTF-8 (replaced by U+FFFD when decoded), rarely. */
const invalidBytes = fc.constantFrom(Buffer.from([0xff]), Buffer.from([0xc3]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xe2, 0x82]));

/** A string literal, quotes included: short, or long enough (64K bytes or more) to be read from its bytes. */
const literal: fc.Arbitrary<Buffer> = fc
  .record({
    pieces: fc.array(literalPiece, { minLength: 1, maxLength: 4 }),
    long: fc.boolean(),
    invalid: fc.option(invalidBytes, { freq: 8 }),
    endsInBackslashes: fc.nat({ max: 3 }),
  })
  .map(({ pieces, long, invalid, endsInBackslashes }) => {
    const unit = pieces.join('');
    const text = long ? unit.repeat(Math.ceil(70_000 / unit.length)) : unit;
    const tail = '\\\\'.repeat(endsInBackslashes);
    return Buffer.concat([Buffer.from(`"${text}`), invalid ?? Buffer.alloc(0), Buffer.from(`${tail}"`)]);
  });

const join = (parts: Buffer[], separator: string) =>
  Buffer.concat(parts.flatMap((part, index) => (index === 0 ? [part] : [Buffer.from(separator), part])));

/** A JSON value as bytes, a few levels deep, mostly valid. */
const value: fc.Arbitrary<Buffer> = fc.letrec<{ value: Buffer }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    literal,
    fc.constantFrom('1', '-2.5e3', 'true', 'null', '[]', '{}').map((text) => Buffer.from(text)),
    // A long run of numbers: no quote for many blocks.
    fc.nat({ max: 40_000 }).map((count) => Buffer.from(`[${Array.from({ length: count }, (_, index) => index % 97).join(',')}]`)),
    fc.array(tie('value'), { maxLength: 4 }).map((items) => Buffer.concat([Buffer.from('['), join(items, ','), Buffer.from(']')])),
    fc
      .array(
        fc.tuple(
          fc.oneof(
            literal,
            fc.constantFrom('"__proto__"', '"a"', '"a"').map((key) => Buffer.from(key)),
          ),
          tie('value'),
        ),
        { maxLength: 4 },
      )
      .map((entries) =>
        Buffer.concat([
          Buffer.from('{'),
          join(
            entries.map(([key, item]) => Buffer.concat([key, Buffer.from(':'), item])),
            ',',
          ),
          Buffer.from('}'),
        ]),
      ),
  ),
})).value;

/** A body: a value, sometimes broken, padded past LARGE_BODY so that it goes to the body thread. */
const body = fc
  .record({
    value,
    padding: fc.constantFrom('whitespace', 'long literal'),
    breakage: fc.constantFrom('none', 'none', 'none', 'trailing brace', 'missing comma', 'cut short', 'byte-order mark'),
  })
  .map(({ value: bytes, padding, breakage }) => {
    const pad = 'p'.repeat(LARGE_BODY);
    let text =
      padding === 'whitespace'
        ? Buffer.concat([bytes, Buffer.from(' '.repeat(LARGE_BODY))])
        : Buffer.concat([Buffer.from(`{"pad":"${pad}","v":`), bytes, Buffer.from('}')]);
    if (breakage === 'trailing brace') text = Buffer.concat([text, Buffer.from('}')]);
    if (breakage === 'missing comma') text = Buffer.concat([Buffer.from(`["${pad}" `), text, Buffer.from(']')]);
    if (breakage === 'cut short') text = text.subarray(0, Math.max(LARGE_BODY + 1, text.length - 3));
    if (breakage === 'byte-order mark') text = Buffer.concat([Buffer.from('\ufeff'), text]);
    return text;
  });

const streamOf = (bytes: Buffer, size: number) =>
  Readable.from(Array.from({ length: Math.ceil(bytes.length / size) }, (_, index) => bytes.subarray(index * size, (index + 1) * size)));

test(`random bodies over a megabyte parse exactly as JSON.parse parses them, errors included (seed ${SEED}, ${RUNS} runs)`, async () => {
  let valid = 0;
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(body, fc.constantFrom(65_536, 4_099), async (bytes, chunk) => {
      runs++;
      assert.ok(bytes.length > LARGE_BODY);
      let expected: unknown;
      try {
        expected = { value: JSON.parse(bytes.toString('utf8')) };
        valid++;
      } catch (error) {
        expected = { error: (error as Error).message };
      }
      const got = await readJsonBody(streamOf(bytes, chunk), 16 << 20, bytes.length).then(
        (parsed) => ({ value: parsed }),
        (error: Error) => ({ error: error.message }),
      );
      assert.deepEqual(got, expected);
      // What goes upstream: the body written again with its long strings' JSON texts as the client
      // sent them reads back as the same value, and each text is its string's.
      if ('value' in got) {
        const texts = jsonTextsOf(got.value);
        for (const [text, json] of texts ?? []) assert.equal(JSON.parse(Buffer.from(json).toString('utf8')), text);
        const { pieces } = await jsonPieces(got.value, texts);
        const sent = Buffer.concat(pieces.map((piece) => Buffer.from(piece))).toString('utf8');
        assert.deepEqual(JSON.parse(sent), got.value);
      }
    }),
    { seed: SEED, numRuns: RUNS },
  );
  console.log(`${valid} of ${runs} bodies were JSON, the others errors`, largeBodies);
  // Both sides are exercised: values and refusals.
  assert.ok(valid >= runs / 5 && valid <= (runs * 4) / 5, `${valid} of ${runs} valid`);
  // And both ways of reading a large body: as it arrives, and on the body thread.
  assert.ok(largeBodies.readArriving >= runs / 20 && largeBodies.byThread >= runs / 20, JSON.stringify(largeBodies));
});
