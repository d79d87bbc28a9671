import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import type { SourceFile } from './source-file.ts';
import { writePatch } from './write-patch.ts';

function directoryWith(files: readonly SourceFile[]): string {
  const directory = mkdtempSync(join(os.tmpdir(), 'write-patch-'));
  for (const file of files) {
    mkdirSync(dirname(join(directory, file.path)), { recursive: true });
    writeFileSync(join(directory, file.path), file.content);
  }
  return directory;
}

function run(directory: string, command: string, args: readonly string[], patch: string): void {
  const result = spawnSync(command, args, { cwd: directory, input: patch, encoding: 'utf8' });
  assert.equal(result.status, 0, `${command} ${args.join(' ')} failed: ${result.stdout}${result.stderr}\n--- patch ---\n${patch}`);
}

/** The patch passes `git apply --check` and `patch -p1 --dry-run`, and applied for real by each gives exactly `after`. */
function assertApplies(before: readonly SourceFile[], after: readonly SourceFile[]): string {
  const patch = writePatch(before, after);
  const tools: Array<[string, string[], string[]]> = [
    ['git', ['apply', '--check', '-'], ['apply', '-']],
    ['patch', ['-p1', '--dry-run', '--batch', '--silent'], ['-p1', '--batch', '--silent', '--no-backup-if-mismatch']],
  ];
  for (const [command, check, apply] of tools) {
    const directory = directoryWith(before);
    try {
      run(directory, command, check, patch);
      run(directory, command, apply, patch);
      for (const file of after) assert.equal(readFileSync(join(directory, file.path), 'utf8'), file.content, `${command}: ${file.path}`);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  }
  return patch;
}

test('nothing changed: an empty patch', () => {
  const files = [{ path: 'a.ts', content: 'a\n' }];
  assert.equal(writePatch(files, files), '');
});

test('a changed file gets git headers and applies with git apply and patch -p1', () => {
  const before = [{ path: 'src/a.ts', content: 'one\ntwo\nthree\n' }];
  const patch = assertApplies(before, [{ path: 'src/a.ts', content: 'one\nTWO\nthree\n' }]);
  assert.equal(patch, 'diff --git a/src/a.ts b/src/a.ts\n--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n');
});

test('a created file is a new file with mode 100644 from /dev/null', () => {
  const before = [{ path: 'a.ts', content: 'a\n' }];
  const patch = assertApplies(before, [...before, { path: 'src/new dir/b.ts', content: 'b\nc\n' }]);
  const path = 'src/new dir/b.ts';
  const header = `diff --git a/${path} b/${path}\nnew file mode 100644\n--- /dev/null\n+++ b/${path}\t\n`;
  assert.ok(patch.startsWith(`${header}@@ -0,0 +1,2 @@\n+b\n+c\n`), patch);
});

test('CRLF lines stay CRLF in the patch and in the patched file', () => {
  const before = [{ path: 'w.js', content: 'a\r\nb\r\nc\r\n' }];
  const patch = assertApplies(before, [{ path: 'w.js', content: 'a\r\nB\r\nc\r\n' }]);
  assert.match(patch, /\n-b\r\n\+B\r\n/);
});

test('a missing final newline is marked, whether it stays missing, is added or is removed', () => {
  assertApplies([{ path: 'v.ts', content: 'a\nb' }], [{ path: 'v.ts', content: 'a\nB' }]);
  const added = assertApplies([{ path: 'v.ts', content: 'a\nb' }], [{ path: 'v.ts', content: 'a\nb\n' }]);
  assert.match(added, /-b\n\\ No newline at end of file\n\+b\n/);
  assertApplies([{ path: 'v.ts', content: 'a\nb\n' }], [{ path: 'v.ts', content: 'a\nb' }]);
});

test('several files, with hunks far apart, in the given order', () => {
  const long = Array.from({ length: 30 }, (_, index) => `line ${index + 1}`).join('\n') + '\n';
  const before = [
    { path: 'b.txt', content: long },
    { path: 'a.txt', content: 'x\n' },
  ];
  const after = [
    { path: 'b.txt', content: long.replace('line 2\n', 'line two\n').replace('line 28\n', 'line 28\nline 28.5\n') },
    { path: 'a.txt', content: 'y\n' },
  ];
  const patch = assertApplies(before, after);
  assert.deepEqual(patch.match(/^diff --git .*$/gm), ['diff --git a/b.txt b/b.txt', 'diff --git a/a.txt b/a.txt']);
  assert.equal(patch.match(/^@@ /gm)?.length, 3);
});

test('a path with spaces ends its ---/+++ names with a tab, as git writes it, so both tools read it whole', () => {
  const patch = assertApplies([{ path: 'docs/my notes.md', content: 'a\n' }], [{ path: 'docs/my notes.md', content: 'b\n' }]);
  assert.match(patch, /^--- a\/docs\/my notes\.md\t\n\+\+\+ b\/docs\/my notes\.md\t\n/m);
});

test('a file left out of after is deleted', () => {
  const directory = directoryWith([{ path: 'gone.txt', content: 'bye\n' }]);
  try {
    run(directory, 'git', ['apply', '-'], writePatch([{ path: 'gone.txt', content: 'bye\n' }], []));
    assert.equal(existsSync(join(directory, 'gone.txt')), false);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
});

test('paths with brackets, spaces, quotes and non-ASCII are named as git names them, and both tools apply the patch', () => {
  const paths = ['app/[slug]/page.tsx', 'my file.js', 'src/café.js', 'say "hi".js', 'docs/été 2.md'];
  const before = paths.map((path) => ({ path, content: 'one\n' }));
  const patch = assertApplies(before, [...paths.slice(1).map((path) => ({ path, content: 'two\n' })), { path: 'new/ünï code.ts', content: 'new\n' }]);
  // As `git diff` writes them: non-ASCII bytes in octal inside quotes, a tab after a name with a space.
  assert.match(
    patch,
    /^diff --git a\/app\/\[slug\]\/page\.tsx b\/app\/\[slug\]\/page\.tsx\ndeleted file mode 100644\n--- a\/app\/\[slug\]\/page\.tsx\n/m,
  );
  assert.ok(
    patch.includes('diff --git "a/src/caf\\303\\251.js" "b/src/caf\\303\\251.js"\n--- "a/src/caf\\303\\251.js"\n+++ "b/src/caf\\303\\251.js"\n'),
    patch,
  );
  assert.ok(patch.includes('--- "a/say \\"hi\\".js"\t\n+++ "b/say \\"hi\\".js"\t\n'), patch);
  assert.ok(patch.includes('--- a/my file.js\t\n+++ b/my file.js\t\n'), patch);
  assert.ok(patch.includes('+++ "b/new/\\303\\274n\\303\\257 code.ts"\t\n'), patch);
});

test('the patch is byte for byte what git diff writes for the same change, index lines aside', () => {
  // In git's order (by bytes), so that the two list the files alike.
  const paths = ['app/[slug]/page.tsx', 'my file.js', 'say "hi".js', 'src/café.js'];
  const directory = directoryWith(paths.map((path) => ({ path, content: 'one\n' })));
  try {
    const git = (...args: string[]) => spawnSync('git', ['-c', 'core.quotePath=true', ...args], { cwd: directory, encoding: 'utf8' });
    git('init', '-q');
    git('add', '-A');
    for (const path of paths) writeFileSync(join(directory, path), 'two\n');
    const actual = writePatch(
      paths.map((path) => ({ path, content: 'one\n' })),
      paths.map((path) => ({ path, content: 'two\n' })),
    );
    assert.equal(actual, git('diff', '--no-color', '--no-ext-diff').stdout.replace(/^index .*\n/gm, ''));
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
});
