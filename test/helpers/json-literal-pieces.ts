/**
 * Pieces of a JSON string literal's text as it appears between its quotes, for the fuzzers of
 * large bodies (src/http/large-body-fuzz.test.ts, src/http/streamed-literals.test.ts): escapes of
 * every kind, lone surrogates, multi-byte characters.
 */
export const VALID_LITERAL_PIECES = [
  'plain ascii ',
  'x',
  ' ',
  '\\n',
  ' \\n\\n ',
  '\\"',
  '\\\\',
  '\\/',
  '\\b\\f\\r\\t',
  '\\u0041',
  '\\u00e9',
  '\\u20AC',
  '\\ud83d\\ude00',
  '\\ud800',
  '\\uDFFF',
  'é',
  '漢字',
  '😀',
];

/** Pieces JSON.parse refuses: a raw control character, a bad escape, a short \u. */
export const REFUSED_LITERAL_PIECES = ['\u0001', '\\x', '\\u12'];
