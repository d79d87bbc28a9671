import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import ranks from 'gpt-tokenizer/bpeRanks/cl100k_base';
import { spawnSync } from 'node:child_process';
import { inflateRawSync } from 'node:zlib';
import { CL100K_PAIR_TABLE, CL100K_WHITESPACE_RUN_COUNTS, CL100K_WHITESPACE_RUNS } from './cl100k-pair-table.ts';
import {
  countingChunks,
  countTexts,
  MEASURE_SLICE,
  tokenFloor,
  tokenFloors,
  tokenizerWork,
  utf8Bytes,
  utf8BytesInSlices,
} from './text-token-count.ts';

const plain = (text: string) => countTokens(text, { disallowedSpecial: new Set() });

/** A seeded generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

function textOf(length: number, pick: (next: () => number) => string, seed = 7): string {
  const next = random(seed);
  let text = '';
  while (text.length < length) text += pick(next);
  return text;
}

const SAMPLES: Record<string, string> = {
  prose: 'The gateway holds the worst case before the first call.\n\nThen it settles.  Twice   spaced. '.repeat(60),
  code: 'export function f(a: number): number {\n  return a * 2; // double\n}\n\tconst x = [1, 2, 3];\r\n'.repeat(60),
  'one character': 'a'.repeat(3_000),
  whitespace: textOf(3_000, (next) => ' \t\n\r'[Math.floor(next() * 4)]!),
  'random code points': textOf(3_000, (next) => String.fromCodePoint(Math.floor(next() * 0xd7ff))),
  emoji: textOf(3_000, (next) => String.fromCodePoint(0x1f600 + Math.floor(next() * 80))),
  CJK: textOf(3_000, (next) => String.fromCharCode(0x4e00 + Math.floor(next() * 20_000))),
};

describe('bounds', () => {
  test("the byte-pair table is cl100k's own", () => {
    const longest = new Uint8Array(256 * 256);
    const encoder = new TextEncoder();
    for (const token of ranks as Array<string | number[]>) {
      const bytes = typeof token === 'string' ? encoder.encode(token) : Uint8Array.from(token);
      for (let index = 0; index + 1 < bytes.length; index++) {
        const pair = bytes[index]! * 256 + bytes[index + 1]!;
        longest[pair] = Math.max(longest[pair]!, bytes.length);
      }
    }
    assert.deepEqual(new Uint8Array(inflateRawSync(Buffer.from(CL100K_PAIR_TABLE, 'base64'))), longest);
  });

  test("the whitespace-run table is cl100k's own", () => {
    const digit: Record<string, number> = { ' ': 0, '\n': 1, '\t': 2, '\r': 3 };
    const longest = new Map<number, number>();
    for (const token of ranks as Array<string | number[]>) {
      if (typeof token !== 'string') continue;
      // Whitespace is ASCII: a token's runs of 8 whitespace characters are its runs of 8 whitespace bytes.
      const length = Buffer.byteLength(token);
      for (let start = 0; start + 8 <= token.length; start++) {
        const run = [...token.slice(start, start + 8)];
        if (!run.every((character) => character in digit)) continue;
        const code = run.reduce((sum, character) => sum * 4 + digit[character]!, 0);
        longest.set(code, Math.max(longest.get(code) ?? 0, length));
      }
    }
    assert.deepEqual(new Map(CL100K_WHITESPACE_RUNS), longest);
  });

  test("the whitespace-run counts are cl100k's own", () => {
    const counted = [' ', '\n', '\t', '\r'].map((character) => Array.from({ length: 128 }, (_, at) => plain(character.repeat(at + 1))));
    assert.deepEqual(CL100K_WHITESPACE_RUN_COUNTS, counted);
  });

  for (const [name, text] of Object.entries(SAMPLES)) {
    test(`${name}: lower bound <= count <= UTF-8 bytes`, () => {
      const count = plain(text);
      assert.ok(tokenFloor(text) <= count, `lower ${tokenFloor(text)} > ${count}`);
      assert.ok(count <= utf8Bytes(text));
      assert.ok(tokenFloor(text) > count / 20, `${name}: floor ${tokenFloor(text)} for ${count}`);
    });
  }

  test('the lower bound holds on 2,000 short random texts of mixed kinds', () => {
    const next = random(99);
    const alphabets = [' \n\t', ' \n', '  \r\n', 'aab', '=-_ ', 'ab c\n', '日本語 ', '😀a', '{}": ,\n', '    x\n'];
    for (let round = 0; round < 2_000; round++) {
      const alphabet = [...alphabets[round % alphabets.length]!];
      const text = textOf(1 + Math.floor(next() * 300), (pick) => alphabet[Math.floor(pick() * alphabet.length)]!, round);
      assert.ok(tokenFloor(text) <= plain(text), JSON.stringify(text));
    }
  });

  test('one letter repeated is held to a token per 8 bytes, as cl100k has no longer run of it', () => {
    assert.equal(tokenFloor('a'.repeat(5 * 1024 * 1024)), (5 * 1024 * 1024) / 8);
  });

  test('spaces and newlines mixed at random are held above half their count', () => {
    const text = textOf(16_384, (next) => (next() < 0.5 ? ' ' : '\n'));
    const count = plain(text);
    assert.ok(tokenFloor(text) > count / 2 && tokenFloor(text) <= count, `${tokenFloor(text)} for ${count}`);
  });
});

test('weighing a long text in slices stays below the count, surrogate pairs kept whole', async () => {
  // 'a' then emoji: every 64 Ki-character slice boundary falls inside a surrogate pair.
  const text = 'a' + '😀'.repeat(100_000);
  const weighed = await tokenFloors([text, 'short']);
  const [floor, short] = weighed.floors;
  assert.equal(weighed.complete, true);
  assert.equal(short, tokenFloor('short'));
  assert.equal(weighed.total, floor! + short!);
  assert.ok(floor! <= tokenFloor(text) && floor! >= tokenFloor(text) - 4, `${floor} for ${tokenFloor(text)}`);
  // plain(text) is 200,001, but the tokenizer takes ~80 s to say so (its merges over one long piece
  // are quadratic): cl100k gives this emoji two tokens, as a run of a thousand shows in ~50 ms.
  assert.equal(plain('a' + '😀'.repeat(1_000)), 1 + 2 * 1_000);
  assert.ok(floor! <= 1 + 2 * 100_000);
});

test('a long text measured in slices has exactly its UTF-8 bytes, the bound a hold is placed on', async () => {
  // Emoji straddle every slice boundary; lone surrogates sit at boundaries too (each is U+FFFD, 3 bytes).
  const straddling = 'a' + '😀'.repeat(MEASURE_SLICE);
  const lone = 'b'.repeat(MEASURE_SLICE - 1) + '\ud800' + 'c'.repeat(MEASURE_SLICE - 1) + '\udc00x' + 'é'.repeat(MEASURE_SLICE);
  for (const text of [straddling, lone, 'short']) assert.equal(await utf8BytesInSlices(text), Buffer.byteLength(text, 'utf8'));
});

test('weighing stops once past a limit, answering a floor above it', async () => {
  const text = 'a'.repeat(1_000_000);
  const stopped = await tokenFloors(['short', text], 20_000);
  assert.equal(stopped.complete, false);
  assert.ok(stopped.total > 20_000 && stopped.total < tokenFloor(text) / 2, String(stopped.total));
  assert.equal((await tokenFloors([text], tokenFloor(text))).complete, true);
});

describe('counting in chunks', () => {
  test('chunks join back to the text, none splits a surrogate pair, runs are cut short', () => {
    for (const text of Object.values(SAMPLES)) {
      const chunks = [...countingChunks(text)];
      assert.equal(chunks.join(''), text);
      for (const chunk of chunks) {
        assert.ok(chunk.length <= 4096);
        assert.ok(!/^[\udc00-\udfff]/.test(chunk) && !/[\ud800-\udbff]$/.test(chunk), 'a surrogate pair was split');
      }
    }
    assert.ok([...countingChunks('a'.repeat(1_000))].every((chunk) => chunk.length <= 128));
  });

  test('runs of a repeated pattern are cut where a scan of every character cuts them', () => {
    // The scan, character by character, as countingChunks made it before it skipped repeats.
    function* scanned(text: string): Generator<string> {
      if (text.length <= 128) return void (text.length && (yield text));
      const isSpace = (code: number) => code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
      let start = 0;
      let boundary = 0;
      for (let index = 1; index < text.length; index++) {
        const code = text.charCodeAt(index);
        const previous = text.charCodeAt(index - 1);
        if ((code === 0x20 && !isSpace(previous)) || (previous === 0x0a && !isSpace(code))) boundary = index;
        if (index - Math.max(start, boundary) >= 128) {
          const cut = previous >= 0xd800 && previous <= 0xdbff ? index - 1 : index;
          yield text.slice(start, cut);
          start = boundary = cut;
        } else if (index - start >= 4096 && boundary > start) {
          yield text.slice(start, boundary);
          start = boundary;
        }
      }
      yield text.slice(start);
    }
    const pieces = ['a', 'b', ' ', '\n', '\t', '😀', 'é', '.'];
    const next = random(99);
    const pick = () => pieces[Math.floor(next() * pieces.length)]!;
    for (let round = 0; round < 400; round++) {
      // A pattern of 1 to 4 pieces (a run of 128 characters may end in a space or a newline, or
      // inside a surrogate pair), repeated, between a head and a tail that may split.
      const pattern = Array.from({ length: 1 + Math.floor(next() * 4) }, pick).join('');
      const run = pattern.repeat(Math.floor(next() * 700));
      const text =
        Array.from({ length: Math.floor(next() * 3) }, pick).join('') + run + Array.from({ length: Math.floor(next() * 3) }, pick).join('');
      assert.deepEqual([...countingChunks(text)], [...scanned(text)], JSON.stringify(pattern));
    }
    for (const text of ['a'.repeat(128 * 40), 'a'.repeat(128 * 40) + ' x', ' '.repeat(128 * 40 + 1) + 'x', 'x' + '\n'.repeat(5_000) + 'y']) {
      assert.deepEqual([...countingChunks(text)], [...scanned(text)]);
    }
  });

  test('text with word boundaries counts exactly as a whole', async () => {
    for (const name of ['prose', 'code']) {
      const text = SAMPLES[name]!.repeat(10);
      assert.ok([...countingChunks(text)].length > 1);
      assert.equal((await countTexts([text])).tokens, plain(text), name);
    }
  });

  test('a run without boundaries counts close to exactly, and not below', async () => {
    for (const name of ['one character', 'whitespace', 'random code points', 'emoji', 'CJK']) {
      const text = SAMPLES[name]!;
      const counted = (await countTexts([text])).tokens;
      const exact = plain(text);
      assert.ok(counted >= exact && counted <= exact * 1.1 + 30, `${name}: ${counted} for ${exact}`);
    }
  });

  test('stops once the count passes a limit, answering a lower bound above it', async () => {
    const text = SAMPLES.prose!.repeat(20);
    const stopped = await countTexts([text, text], 500);
    assert.equal(stopped.complete, false);
    assert.ok(stopped.tokens > 500 && stopped.tokens <= 2 * plain(text));
  });

  test('a 5 MiB run of one character is counted by tokenizing one chunk of it', async () => {
    const text = 'a'.repeat(5 * 1024 * 1024);
    const before = tokenizerWork.characters;
    const counted = await countTexts([text]);
    assert.ok(counted.complete);
    assert.equal(counted.tokens, plain('a'.repeat(128)) * (text.length / 128));
    assert.equal(tokenizerWork.characters - before, 128);
  });

  test('runs of one whitespace character are counted without the tokenizer, as it counts their chunks', async () => {
    for (const character of [' ', '\n', '\t', '\r']) {
      // Not a multiple of 128: the last chunk is shorter.
      const text = character.repeat(1024 * 1024 + 77);
      const before = tokenizerWork.characters;
      const counted = await countTexts([text]);
      assert.ok(counted.complete);
      assert.equal(
        counted.tokens,
        plain(character.repeat(128)) * Math.floor(text.length / 128) + plain(character.repeat(77)),
        JSON.stringify(character),
      );
      assert.equal(tokenizerWork.characters - before, 0, `${JSON.stringify(character)}: the tokenizer was given characters`);
    }
    // A run of whitespace inside other text is cut where the pre-tokenizer splits, and those chunks go to the tokenizer.
    const mixed = `word${' '.repeat(300)}word`;
    assert.equal(
      (await countTexts([mixed])).tokens,
      [...countingChunks(mixed)].reduce((sum, chunk) => sum + plain(chunk), 0),
    );
  });

  test('a long count gives the event loop back: timers fire while it runs', async () => {
    const text = textOf(400_000, (next) => String.fromCharCode(0x4e00 + Math.floor(next() * 20_000)), 11);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    await countTexts([text]);
    clearInterval(timer);
    assert.ok(ticks > 3, `only ${ticks} timer turns during the count`);
  });
});

test('the counting thread keeps no process alive once idle: started ahead, or after a count', () => {
  for (const script of ['startCounting();', 'await countTexts(["hello world"]);']) {
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', `import { startCounting, countTexts } from './src/tokens/text-token-count.ts'; ${script}`],
      { encoding: 'utf8', timeout: 30_000 },
    );
    assert.deepEqual([run.status, run.signal], [0, null], `${script} ${run.stderr}`);
  }
});
