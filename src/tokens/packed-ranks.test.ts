import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';
import cl100kRanks from 'gpt-tokenizer/bpeRanks/cl100k_base';
import o200kRanks from 'gpt-tokenizer/bpeRanks/o200k_base';
import { CL100K_TOKEN_SPLIT_REGEX, O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/esm/encodingParams/constants';
import { CountingEncoding, packRanks } from './packed-ranks.mjs';

const plain = { disallowedSpecial: new Set<string>() };

function textOf(length: number, pick: (next: () => number) => string): string {
  let state = 11;
  const next = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  let text = '';
  while (text.length < length) text += pick(next);
  return text;
}

const TEXTS = [
  'The gateway holds the worst case before the first call.\n\nThen it settles.  Twice   spaced. '.repeat(40),
  'export function f(a: number): number {\n  return a * 2; // double\n}\n\tconst x = [1, 2, 3];\r\n'.repeat(40),
  'Prüfung der Größe, naïve café, Ελληνικά, русский текст, עברית, العربية, हिन्दी, 日本語のテキスト、한국어 텍스트.'.repeat(20),
  'a literal <|endoftext|> and <|im_start|> in a prompt are text',
  textOf(4_000, (next) => String.fromCodePoint(Math.floor(next() * 0xd7ff))),
  textOf(2_000, (next) => String.fromCodePoint(0x1f600 + Math.floor(next() * 80))),
  textOf(2_000, (next) => ' \t\n\r'[Math.floor(next() * 4)]!),
  '',
];

for (const [name, ranks, split, reference] of [
  ['cl100k_base', cl100kRanks, CL100K_TOKEN_SPLIT_REGEX, countCl100k],
  ['o200k_base', o200kRanks, O200K_TOKEN_SPLIT_REGEX, countO200k],
] as const) {
  test(`${name} packed as the build writes it counts what gpt-tokenizer counts`, () => {
    // Through JSON, as dist/server holds it.
    const packed = JSON.parse(JSON.stringify(packRanks(ranks as Array<string | number[]>)));
    const encoding = new CountingEncoding(packed, split, 10_000);
    for (const text of TEXTS) assert.equal(encoding.count(text), reference(text, plain), JSON.stringify(text.slice(0, 40)));
  });
}
