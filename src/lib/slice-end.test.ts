import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sliceEnd } from './slice-end.ts';

test('a slice ends one short of a surrogate pair it would split, and never holds nothing', () => {
  const text = 'ab😀c';
  assert.equal(sliceEnd(text, 0, 2), 2);
  // Ending at 3 would split the emoji (units 2 and 3).
  assert.equal(sliceEnd(text, 0, 3), 2);
  assert.equal(sliceEnd(text, 0, 4), 4);
  // A slice of one unit that is a high surrogate keeps it rather than end where it starts.
  assert.equal(sliceEnd(text, 2, 1), 3);
  // The end of the text is never short, and a lone high surrogate last is kept.
  assert.equal(sliceEnd('ab\ud800', 0, 10), 3);
  assert.equal(sliceEnd('ab\ud800', 0, 3), 3);
});
