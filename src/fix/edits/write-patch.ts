import { structuredPatch } from 'diff';
import { gitQuotedName } from './git-path-quote.ts';
import type { SourceFile } from './source-file.ts';

/**
 * A git-style unified diff from before/after (`diff --git a/p b/p`, `new file mode 100644` for
 * created files); '' when nothing changed. Names are written as git writes them (quoted when
 * git quotes them), so it applies with both `git apply` and `patch -p1`.
 */
export function writePatch(before: readonly SourceFile[], after: readonly SourceFile[]): string {
  const old = new Map(before.map((file) => [file.path, file.content]));
  const next = new Map(after.map((file) => [file.path, file.content]));
  const paths = [...new Set([...before.map((file) => file.path), ...after.map((file) => file.path)])];
  return paths.map((path) => filePatch(path, old.get(path), next.get(path))).join('');
}

function filePatch(path: string, before: string | undefined, after: string | undefined): string {
  if (before === after) return '';
  const a = gitQuotedName('a/', path);
  const b = gitQuotedName('b/', path);
  // Git ends a ---/+++ line whose name holds a space with a tab, so that patch(1) reads the whole name.
  const tab = a.includes(' ') ? '\t' : '';
  const header = [`diff --git ${a} ${b}`];
  if (before === undefined) header.push('new file mode 100644', '--- /dev/null', `+++ ${b}${tab}`);
  else if (after === undefined) header.push('deleted file mode 100644', `--- ${a}${tab}`, '+++ /dev/null');
  else header.push(`--- ${a}${tab}`, `+++ ${b}${tab}`);
  const { hunks } = structuredPatch('a', 'b', before ?? '', after ?? '', undefined, undefined, { context: 3 });
  if (hunks.length === 0) return header.slice(0, before === undefined || after === undefined ? 2 : 1).join('\n') + '\n';
  const body = hunks.flatMap((hunk) => [`@@ -${range(hunk.oldStart, hunk.oldLines)} +${range(hunk.newStart, hunk.newLines)} @@`, ...hunk.lines]);
  return [...header, ...body].join('\n') + '\n';
}

/** "start,count" as diff(1) writes it: no count when it is 1; an empty range names the line before it (jsdiff names the one after). */
function range(start: number, count: number): string {
  if (count === 1) return String(start);
  return count === 0 ? `${Math.max(0, start - 1)},0` : `${start},${count}`;
}
