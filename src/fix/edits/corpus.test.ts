import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCorpus } from '../../../bench/fix-edits/run-corpus.ts';

// The corpus of model-style replies (bench/fix-edits/cases.ts) pinned: no reply may be applied
// wrongly, and every reply that can be recovered must be applied exactly.
test('the edit corpus: zero applied wrongly, every recoverable reply applied exactly', () => {
  const results = runCorpus();
  assert.ok(results.length >= 40);
  const wrong = results.filter((result) => result.verdict === 'applied wrongly' || result.verdict === 'refused wrongly');
  assert.deepEqual(wrong, []);
});
