import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { REFUSED_LITERAL_PIECES, VALID_LITERAL_PIECES } from '../../../test/helpers/json-literal-pieces.ts';
import { StreamedLiterals } from './streamed-literals.ts';

/**
 * The reader of a large body as it arrives, step by step: whatever the steps (one byte, an escape
 * or a UTF-8 sequence cut in two, a whole body at once), what it reads is JSON.parse's own value,
 * and what it cannot read exactly it leaves to the body thread. parse-json-body's fuzz compares both
 * ways through readJsonBody; this one cuts the steps where they are hardest.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 2026);
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);

/** Pieces JSON.parse accepts inside a literal: the literal stays ASCII, turns wide midway, or is wide from the start. */
const validPiece = fc.constantFrom(...VALID_LITERAL_PIECES);

/** Pieces it refuses, or that are not UTF-8: the reader must give up (the thread says why). */
const refusedPiece = fc.constantFrom(
  ...REFUSED_LITERAL_PIECES.map((piece) => Buffer.from(piece)),
  Buffer.from('\\u12G4'),
  Buffer.from([0xff]),
  Buffer.from([0xed, 0xa0, 0x80]),
);

/** A literal of at least 64K bytes, quotes included. */
const longLiteral = (pieces: fc.Arbitrary<string[]>) =>
  pieces.map((parts) => {
    const unit = parts.join('');
    return `"${unit.repeat(Math.ceil(70_000 / Buffer.byteLength(unit)))}"`;
  });

/** Splits `length` bytes into steps: some tiny (cutting escapes and sequences), some large. */
const steps = fc.array(fc.oneof(fc.integer({ min: 1, max: 7 }), fc.integer({ min: 1000, max: 70_000 })), { minLength: 1, maxLength: 40 });

function readInSteps(bytes: Uint8Array, sizes: number[]) {
  const reader = new StreamedLiterals(new ArrayBuffer(2 * bytes.length));
  let received = 0;
  for (let index = 0; received < bytes.length; index++) {
    received = Math.min(bytes.length, received + sizes[index % sizes.length]!);
    reader.advance(bytes, received);
  }
  return reader;
}

/** The body as readJsonBody gives it: each long string put back where it was read from. */
function assemble(body: unknown, longs: Array<{ path: Array<string | number>; bytes: Uint8Array; latin1: boolean }>) {
  for (const { path, bytes, latin1 } of longs) {
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString(latin1 ? 'latin1' : 'utf16le');
    if (path.length === 0) return text;
    let container = body as Record<string | number, unknown>;
    for (const key of path.slice(0, -1)) container = container[key] as Record<string | number, unknown>;
    Object.defineProperty(container, path.at(-1)!, { value: text, enumerable: true, writable: true, configurable: true });
  }
  return body;
}

test(`long literals read in steps of any size are JSON.parse's strings (seed ${SEED}, ${RUNS} runs)`, () => {
  fc.assert(
    fc.property(
      longLiteral(fc.array(validPiece, { minLength: 1, maxLength: 5 })),
      fc.option(longLiteral(fc.array(validPiece, { minLength: 1, maxLength: 3 }))),
      steps,
      (content, second, sizes) => {
        const text = `{"model":"m","messages":[{"role":"user","content":${content}}]${second ? `,"metadata":{"note":${second}}` : ''}}`;
        const bytes = new Uint8Array(Buffer.from(text));
        const reader = readInSteps(bytes, sizes);
        const read = reader.finish(bytes, bytes.length, 64);
        assert.ok(read && 'body' in read, 'read as it arrived');
        assert.deepEqual(assemble(read.body, read.longs), JSON.parse(text));
        for (const { bytes: characters, latin1, json } of read.longs) {
          const string = Buffer.from(characters.buffer, characters.byteOffset, characters.byteLength).toString(latin1 ? 'latin1' : 'utf16le');
          assert.equal(JSON.parse(Buffer.from(json!).toString('utf8')), string);
        }
      },
    ),
    { seed: SEED, numRuns: RUNS },
  );
});

test('steps of one, two and three bytes read the same as one step', () => {
  const text = `{"ascii":"${'plain ascii \\n '.repeat(5000)}","mixed":"${'plain \\u00e9 é 漢字 😀 '.repeat(3000)}"}`;
  const bytes = new Uint8Array(Buffer.from(text));
  for (const size of [1, 2, 3, bytes.length]) {
    const read = readInSteps(bytes, [size]).finish(bytes, bytes.length, 64);
    assert.ok(read && 'body' in read, `steps of ${size}`);
    assert.deepEqual(assemble(read.body, read.longs), JSON.parse(text), `steps of ${size}`);
  }
});

test('a long literal JSON.parse refuses, or that is not UTF-8, is left to the body thread', () => {
  fc.assert(
    fc.property(fc.array(validPiece, { minLength: 1, maxLength: 3 }), refusedPiece, fc.nat({ max: 1000 }), steps, (parts, refused, at, sizes) => {
      const unit = parts.join('');
      const good = unit.repeat(Math.ceil(70_000 / Buffer.byteLength(unit)));
      // The refused piece lands after an escape or a sequence, never inside one.
      const cut = good.length - at - 1;
      const head = good.slice(0, cut).replace(/\\*$/, '');
      const bytes = new Uint8Array(
        Buffer.concat([Buffer.from(`{"content":"${head}`), refused, Buffer.from(`${good.slice(0, 10).replace(/\\+$/, '')}"}`)]),
      );
      const reader = readInSteps(bytes, sizes);
      assert.equal(reader.finish(bytes, bytes.length, 64), null);
    }),
    { seed: SEED, numRuns: RUNS },
  );
});

test('a body with more than a few hundred kilobytes outside long literals is left to the body thread', () => {
  const strings = Array.from({ length: 40_000 }, (_, index) => `message ${index}`);
  const bytes = new Uint8Array(Buffer.from(JSON.stringify({ messages: strings, content: 'x'.repeat(70_000) })));
  const reader = readInSteps(bytes, [65_536]);
  assert.equal(reader.failed, true);
  assert.equal(reader.finish(bytes, bytes.length, 64), null);
});

test('a body nested too deep is refused where it nests, as the thread refuses it', () => {
  const text = `{"content":"${'a'.repeat(70_000)}","metadata":${'['.repeat(70)}${']'.repeat(70)}}`;
  const bytes = new Uint8Array(Buffer.from(text));
  const read = readInSteps(bytes, [4096]).finish(bytes, bytes.length, 64);
  assert.ok(read && 'deepAt' in read);
  assert.match(read.deepAt, /^metadata(\[0\])+$/);
});
