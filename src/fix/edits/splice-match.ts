import { diffArrays } from 'diff';
import type { Match } from './find-match.ts';
import type { TextLine } from './text-lines.ts';

/**
 * The file lines that replace a match. Lines the edit keeps (same in search and replace) stay as
 * the file has them, with their own whitespace and endings; new lines are re-indented like the
 * match and take the file's usual ending. File blank lines the search skipped stay next to a kept
 * neighbour and go when both neighbours go.
 */
export function spliceMatch(file: readonly TextLine[], match: Match, search: readonly string[], replace: readonly string[], eol: string): TextLine[] {
  const out: TextLine[] = [];
  let searchIndex = 0;
  let fileCursor = match.start;
  let previousKept = true;
  const reach = (searchLine: number, kept: boolean): void => {
    const fileLine = match.map[searchLine]!;
    if (fileLine < 0) return;
    if (previousKept || kept) out.push(...file.slice(fileCursor, fileLine));
    if (kept) out.push(file[fileLine]!);
    fileCursor = fileLine + 1;
    previousKept = kept;
  };
  for (const change of diffArrays([...search], [...replace])) {
    if (change.added) {
      for (const line of change.value) out.push({ text: match.reindent(line), eol });
    } else {
      for (let count = 0; count < change.value.length; count++) reach(searchIndex++, !change.removed);
    }
  }
  return out;
}
