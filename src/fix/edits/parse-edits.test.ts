import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseEdits } from './parse-edits.ts';

const F = '```';
const known = ['src/a.ts', 'src/b.ts', 'README.md'];

test('a search/replace block after a path line becomes a replace edit, and the prose around it the explanation', () => {
  const reply = `The bug is here.\n\nsrc/a.ts\n${F}ts\n<<<<<<< SEARCH\nconst a = 1;\n=======\nconst a = 2;\n>>>>>>> REPLACE\n${F}\n\nThat fixes it.`;
  const parsed = parseEdits(reply, known);
  assert.deepEqual(parsed.edits, [
    { kind: 'replace', path: 'src/a.ts', search: 'const a = 1;\n', replace: 'const a = 2;\n', format: 'search-replace' },
  ]);
  assert.equal(parsed.explanation, 'The bug is here.\n\nThat fixes it.');
  assert.deepEqual(parsed.problems, []);
});

test('the path of a search/replace block may be bold, quoted, in the info string or the first line of the fence', () => {
  const block = '<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE';
  for (const reply of [
    `**src/b.ts**\n${F}\n${block}\n${F}`,
    `\`src/b.ts\`:\n${F}\n${block}\n${F}`,
    `${F}ts src/b.ts\n${block}\n${F}`,
    `${F}\nsrc/b.ts\n${block}\n${F}`,
    `src/b.ts\n${block}`,
  ]) {
    assert.deepEqual(
      parseEdits(reply, known).edits.map((edit) => edit.path),
      ['src/b.ts'],
      reply,
    );
  }
});

test('an empty SEARCH is a create edit; CRLF replies are read as LF', () => {
  const parsed = parseEdits(`src/new.ts\r\n${F}\r\n<<<<<<< SEARCH\r\n=======\r\nexport {};\r\n>>>>>>> REPLACE\r\n${F}\r\n`, known);
  assert.deepEqual(parsed.edits, [{ kind: 'create', path: 'src/new.ts', content: 'export {};\n', format: 'search-replace' }]);
});

test('an unterminated SEARCH block and a block without a file are problems', () => {
  const open = parseEdits(`src/a.ts\n${F}\n<<<<<<< SEARCH\nx\n=======\ny\n${F}`, known);
  assert.match(open.problems[0]!, /src\/a\.ts is not terminated \(no >>>>>>> REPLACE line\)/);
  const nameless = parseEdits(`${F}\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n${F}`, known);
  assert.match(nameless.problems[0]!, /does not say which file/);
});

test('each hunk of a unified diff is a replace edit with its line hint; wrong counts and stripped blank context are read', () => {
  const reply =
    `${F}diff\ndiff --git a/src/a.ts b/src/a.ts\nindex 1..2 100644\n--- a/src/a.ts\n+++ b/src/a.ts\n` +
    `@@ -1,99 +1,2 @@\n one\n\n-two\n+TWO\n@@ -10 +10 @@\n-ten\n+TEN\n${F}`;
  const parsed = parseEdits(reply, known);
  assert.deepEqual(parsed.edits, [
    { kind: 'replace', path: 'src/a.ts', search: 'one\n\ntwo\n', replace: 'one\n\nTWO\n', format: 'unified-diff', lineHint: 1 },
    { kind: 'replace', path: 'src/a.ts', search: 'ten\n', replace: 'TEN\n', format: 'unified-diff', lineHint: 10 },
  ]);
});

test('a bare diff without a/ b/ prefixes ends where the prose starts; /dev/null makes a create edit', () => {
  const reply = 'Patch:\n--- src/b.ts\n+++ src/b.ts\n@@ -2 +2 @@\n-old\n+new\n\nDone.\n--- /dev/null\n+++ b/src/c.ts\n@@ -0,0 +1 @@\n+c\n';
  const parsed = parseEdits(reply, known);
  assert.deepEqual(parsed.edits, [
    { kind: 'replace', path: 'src/b.ts', search: 'old\n', replace: 'new\n', format: 'unified-diff', lineHint: 2 },
    { kind: 'create', path: 'src/c.ts', content: 'c\n', format: 'unified-diff' },
  ]);
  assert.equal(parsed.explanation, 'Patch:\n\nDone.');
});

test('"\\ No newline at end of file" leaves the final newline off the side it follows', () => {
  const parsed = parseEdits(`${F}diff\n--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1 @@\n-last\n\\ No newline at end of file\n+last\n${F}`, known);
  assert.deepEqual(parsed.edits[0], { kind: 'replace', path: 'src/a.ts', search: 'last', replace: 'last\n', format: 'unified-diff', lineHint: 1 });
});

test('a diff hunk without any file header is a problem', () => {
  assert.match(parseEdits(`${F}diff\n@@ -1 +1 @@\n-a\n+b\n${F}`, known).problems[0]!, /no file header/);
});

test('a fence named by its info string or the line before is a whole file, only for given paths', () => {
  for (const reply of [`${F}ts src/a.ts\nx\n${F}`, `${F}src/a.ts\nx\n${F}`, `\`src/a.ts\`:\n${F}ts\nx\n${F}`, `src/a.ts\n\n${F}\nx\n${F}`]) {
    assert.deepEqual(parseEdits(reply, known).edits, [{ kind: 'whole-file', path: 'src/a.ts', content: 'x\n' }], reply);
  }
  const unknown = parseEdits(`${F}ts src/other.ts\nx\n${F}`, known);
  assert.deepEqual(unknown.edits, []);
  assert.match(unknown.problems[0]!, /src\/other\.ts, which was not given; to create a file use an empty SEARCH block/);
});

test('ordinary code in the prose is neither an edit nor a problem, and stays in the explanation', () => {
  const reply = `Call it like this:\n${F}ts\nfoo(1);\n${F}`;
  assert.deepEqual(parseEdits(reply, known), { edits: [], explanation: reply, problems: [] });
});

test('formats mix in one reply, in reply order', () => {
  const reply = [
    `${F}diff\n--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1 @@\n-a\n+b\n${F}`,
    `src/b.ts\n${F}\n<<<<<<< SEARCH\nc\n=======\nd\n>>>>>>> REPLACE\n${F}`,
    `README.md\n${F}md\n# Title\n${F}`,
  ].join('\n\n');
  const read = parseEdits(reply, known).edits.map((edit) => `${edit.kind} ${edit.path}`);
  assert.deepEqual(read, ['replace src/a.ts', 'replace src/b.ts', 'whole-file README.md']);
});

test('a search/replace block may contain fences of its own (a README), and the reply goes on after its fence', () => {
  const reply =
    `README.md\n${F}md\n<<<<<<< SEARCH\n${F}sh\nnpm i\n${F}\n=======\n${F}sh\nnpm ci\n${F}\n>>>>>>> REPLACE\n${F}\n\n` +
    `src/a.ts\n${F}\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n${F}\nBye.`;
  const parsed = parseEdits(reply, known);
  assert.deepEqual(
    parsed.edits.map((edit) => (edit.kind === 'replace' ? [edit.path, edit.search, edit.replace] : [])),
    [
      ['README.md', `${F}sh\nnpm i\n${F}\n`, `${F}sh\nnpm ci\n${F}\n`],
      ['src/a.ts', 'a\n', 'b\n'],
    ],
  );
  assert.equal(parsed.explanation, 'Bye.');
});

test('a whole file that holds fences of its own is a problem, not a truncated file', () => {
  const parsed = parseEdits(`README.md\n${F}md\n# Title\n${F}sh\nnpm i\n${F}\nMore text.\n${F}`, known);
  assert.deepEqual(parsed.edits, []);
  assert.match(parsed.problems[0]!, /README\.md contains code fences of its own/);
});

test('in a diff, a context line holding a fence does not close the diff fence', () => {
  const parsed = parseEdits(`${F}diff\n--- a/README.md\n+++ b/README.md\n@@ -1,3 +1,3 @@\n npm i\n ${F}\n-old\n+new\n${F}`, known);
  assert.deepEqual(parsed.edits, [
    { kind: 'replace', path: 'README.md', search: `npm i\n${F}\nold\n`, replace: `npm i\n${F}\nnew\n`, format: 'unified-diff', lineHint: 1 },
  ]);
});
