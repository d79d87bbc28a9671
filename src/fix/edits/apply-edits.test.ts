import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyEdits, type ApplyOutcome } from './apply-edits.ts';
import type { Edit } from './edit.ts';
import type { SourceFile } from './source-file.ts';

const replace = (path: string, search: string, replacement: string, lineHint?: number): Edit =>
  lineHint === undefined
    ? { kind: 'replace', path, search, replace: replacement, format: 'search-replace' }
    : { kind: 'replace', path, search, replace: replacement, format: 'unified-diff', lineHint };

function applied(outcome: ApplyOutcome): Map<string, string> {
  if (!outcome.ok) assert.fail(`expected the edits to apply, got: ${outcome.problems.join(' | ')}`);
  return new Map(outcome.files.map((file) => [file.path, file.content]));
}

function refused(outcome: ApplyOutcome): string {
  if (outcome.ok) assert.fail(`expected a refusal, got changes to ${outcome.touched.join(', ')}`);
  return outcome.problems.join(' | ');
}

const code: SourceFile = { path: 'src/a.ts', content: 'function a() {\n  return 1;\n}\n\nfunction b() {\n  return 2;\n}\n' };

test('an exact match is replaced, and the outcome lists every file, then created ones, with what was touched', () => {
  const other = { path: 'src/b.ts', content: 'b\n' };
  const outcome = applyEdits(
    [code, other],
    [replace('src/a.ts', '  return 1;\n', '  return 10;\n'), { kind: 'create', path: 'src/c.ts', content: 'c\n', format: 'search-replace' }],
  );
  assert.deepEqual(outcome, {
    ok: true,
    files: [{ path: 'src/a.ts', content: code.content.replace('return 1;', 'return 10;') }, other, { path: 'src/c.ts', content: 'c\n' }],
    touched: ['src/a.ts', 'src/c.ts'],
  });
});

test('edits apply in order, each on the result of the one before', () => {
  const edits = [replace('src/a.ts', '  return 1;\n', '  return 10;\n'), replace('src/a.ts', '  return 10;\n', '  return 100;\n')];
  const files = applied(applyEdits([code], edits));
  assert.match(files.get('src/a.ts')!, /return 100;/);
});

test('trailing whitespace in the search is tolerated, and unchanged file lines keep theirs', () => {
  const file = { path: 'x.py', content: 'a = 1  \nb = 2\n' };
  const files = applied(applyEdits([file], [replace('x.py', 'a = 1\nb = 2   \n', 'a = 1\nb = 3\n')]));
  assert.equal(files.get('x.py'), 'a = 1  \nb = 3\n');
});

test('blank lines missing from the search stay in the file', () => {
  const files = applied(applyEdits([code], [replace('src/a.ts', '}\nfunction b() {\n  return 2;\n', '}\nfunction b() {\n  return 20;\n')]));
  assert.equal(files.get('src/a.ts'), code.content.replace('return 2;', 'return 20;'));
});

test('blank lines extra in the search do not appear in the file', () => {
  const files = applied(applyEdits([code], [replace('src/a.ts', 'function a() {\n\n  return 1;\n', 'function a() {\n\n  return 10;\n')]));
  assert.equal(files.get('src/a.ts'), code.content.replace('return 1;', 'return 10;'));
});

test('a search indented less than the file is found, and the replacement indented like the file', () => {
  const file = { path: 'k.ts', content: 'class K {\n  run() {\n    go();\n  }\n}\n' };
  const files = applied(applyEdits([file], [replace('k.ts', 'run() {\n  go();\n}\n', 'run() {\n  ready();\n  go();\n}\n')]));
  assert.equal(files.get('k.ts'), 'class K {\n  run() {\n    ready();\n    go();\n  }\n}\n');
});

test('a search indented more than the file is found, and the replacement dedented', () => {
  const file = { path: 'k.py', content: 'def f():\n    return 1\n' };
  const files = applied(applyEdits([file], [replace('k.py', '    def f():\n        return 1\n', '    def f():\n        x = 1\n        return x\n')]));
  assert.equal(files.get('k.py'), 'def f():\n    x = 1\n    return x\n');
});

test('spaces where the file has tabs are matched, and new lines written with tabs', () => {
  const file = { path: 't.go', content: 'func f() {\n\tif x {\n\t\ty()\n\t}\n}\n' };
  const files = applied(applyEdits([file], [replace('t.go', '    if x {\n        y()\n    }\n', '    if x {\n        y()\n        z()\n    }\n')]));
  assert.equal(files.get('t.go'), 'func f() {\n\tif x {\n\t\ty()\n\t\tz()\n\t}\n}\n');
});

test('a CRLF file is matched on LF text and keeps CRLF everywhere', () => {
  const file = { path: 'w.js', content: 'a();\r\nb();\r\n' };
  const files = applied(applyEdits([file], [replace('w.js', 'b();\n', 'b();\nc();\n')]));
  assert.equal(files.get('w.js'), 'a();\r\nb();\r\nc();\r\n');
});

test('a file without a final newline keeps not having one, unless a diff hunk says to add it', () => {
  const file = { path: 'v.ts', content: 'one\ntwo' };
  assert.equal(applied(applyEdits([file], [replace('v.ts', 'two\n', 'three\nfour\n')])).get('v.ts'), 'one\nthree\nfour');
  assert.equal(applied(applyEdits([file], [replace('v.ts', 'two', 'two\n', 2)])).get('v.ts'), 'one\ntwo\n');
});

test('a whole file replaces the content and keeps the line endings and missing final newline', () => {
  const file = { path: 'w.ts', content: 'a\r\nb' };
  assert.equal(applied(applyEdits([file], [{ kind: 'whole-file', path: 'w.ts', content: 'a\nc\n' }])).get('w.ts'), 'a\r\nc');
});

test('an ambiguous search is refused, saying how many places', () => {
  const problem = refused(applyEdits([code], [replace('src/a.ts', '}\n', '};\n')]));
  assert.match(problem, /^src\/a\.ts: the SEARCH text matches 2 places \(lines 3, 7\).*Add surrounding lines/);
});

test('a diff hunk whose line number points at one of the identical places takes that one; elsewhere it is refused', () => {
  const files = applied(applyEdits([code], [replace('src/a.ts', '}\n', '};\n', 7)]));
  assert.equal(files.get('src/a.ts'), 'function a() {\n  return 1;\n}\n\nfunction b() {\n  return 2;\n};\n');
  refused(applyEdits([code], [replace('src/a.ts', '}\n', '};\n', 5)]));
});

test('a later hunk line number counts from before the earlier hunks moved the lines', () => {
  const edits = [replace('src/a.ts', 'function a() {\n', '// a\nfunction a() {\n', 1), replace('src/a.ts', '}\n', '};\n', 7)];
  assert.match(applied(applyEdits([code], edits)).get('src/a.ts')!, /return 2;\n\};\n$/);
});

test('search text not found is refused, naming the lines that are not in the file', () => {
  const problem = refused(applyEdits([code], [replace('src/a.ts', 'function a() {\n  return 42;\n', 'x\n')]));
  assert.match(problem, /not found: line 2 "return 42;" of the SEARCH part is not in the file/);
});

test('a replacement that leaves code out is refused; an ellipsis the file already has is not', () => {
  for (const elision of ['  // ...', '  // ... existing code ...', '  /* ... */', '  ...', '  # rest of the file unchanged', '  <!-- ... -->']) {
    assert.match(refused(applyEdits([code], [replace('src/a.ts', '  return 1;\n', `${elision}\n  return 1;\n`)])), /leaves code out/, elision);
  }
  const stub = { path: 's.py', content: 'class P:\n    def f(self): ...\n    ...\n' };
  applied(applyEdits([stub], [replace('s.py', 'class P:\n', 'class Q:\n'), { kind: 'whole-file', path: 's.py', content: 'class Q:\n    ...\n' }]));
});

test('paths not given, read-only, traversing, absolute, in .git or with control characters are refused', () => {
  assert.match(refused(applyEdits([code], [replace('src/z.ts', 'a\n', 'b\n')])), /src\/z\.ts: this file was not given.*\(src\/a\.ts\)/);
  const readOnly = new Set(['src/a.ts']);
  assert.match(refused(applyEdits([code], [replace('src/a.ts', '  return 1;\n', '  return 2;\n')], { readOnly })), /read-only/);
  for (const path of ['../x.ts', 'src/../../x.ts', '/etc/passwd', 'C:/x.ts', '.git/config', 'a\tb.ts']) {
    assert.match(refused(applyEdits([code], [{ kind: 'create', path, content: 'x\n', format: 'search-replace' }])), /refused because/, path);
  }
});

test('one refused edit refuses the whole reply, and no file changes', () => {
  const outcome = applyEdits([code], [replace('src/a.ts', '  return 1;\n', '  return 10;\n'), replace('src/a.ts', 'nope\n', 'x\n')]);
  assert.match(refused(outcome), /^Edit 2 \(src\/a\.ts\): the SEARCH text was not found/);
  assert.equal(code.content.includes('return 10;'), false);
});

test('a reply without edits, or whose edits change nothing, is refused', () => {
  assert.match(refused(applyEdits([code], [])), /contains no edits/);
  assert.match(refused(applyEdits([code], [{ kind: 'whole-file', path: 'src/a.ts', content: code.content }])), /leave every file as it was/);
});

test('an empty search is refused on a file with content, and fills an empty file', () => {
  assert.match(refused(applyEdits([code], [{ kind: 'create', path: 'src/a.ts', content: 'x\n', format: 'search-replace' }])), /already exists/);
  const empty = { path: 'e.ts', content: '' };
  assert.equal(applied(applyEdits([empty], [{ kind: 'create', path: 'e.ts', content: 'x\n', format: 'search-replace' }])).get('e.ts'), 'x\n');
});

test('paths with spaces may be edited (writePatch writes them the way git does)', () => {
  const file = { path: 'docs/my notes.md', content: 'a\n' };
  assert.equal(applied(applyEdits([file], [replace('docs/my notes.md', 'a\n', 'b\n')])).get('docs/my notes.md'), 'b\n');
});
