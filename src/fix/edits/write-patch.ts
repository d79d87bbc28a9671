import { structuredPatch } from 'diff';
import type { SourceFile } from './source-file.ts';

/**
 * A git-style unified diff from before/after (`diff --git a/p b/p`, `new file mode 100644` for
 * created files); '' when nothing changed. It applies with both `git apply` and `patch -p1`.
 */
export function writePatch(before: readonly SourceFile[], after: readonly SourceFile[]): string {
  const old = new Map(before.map((file) => [file.path, file.content]));
  const next = new Map(after.map((file) => [file.path, file.content]));
  const paths = [...new Set([...before.map((file) => file.path), ...after.map((file) => file.path)])];
  return paths.map((path) => filePatch(path, old.get(path), next.get(path))).join('');
}

function filePatch(path: string, before: string | undefined, after: string | undefined): string {
  if (before === after) return '';
  // eslint-disable-next-line no-control-regex -- control characters are exactly what this refuses
  if (/[\u0000-\u001f\u007f"\\]/.test(path)) {
    throw new Error(`cannot write a patch for ${JSON.stringify(path)}: control character, quote or backslash`);
  }
  // Git ends a ---/+++ name that contains a space with a tab, so that patch(1) reads the whole name.
  const tab = path.includes(' ') ? '\t' : '';
  const header = [`diff --git a/${path} b/${path}`];
  if (before === undefined) header.push('new file mode 100644', '--- /dev/null', `+++ b/${path}${tab}`);
  else if (after === undefined) header.push('deleted file mode 100644', `--- a/${path}${tab}`, '+++ /dev/null');
  else header.push(`--- a/${path}${tab}`, `+++ b/${path}${tab}`);
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
