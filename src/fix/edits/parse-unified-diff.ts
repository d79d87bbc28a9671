import type { Edit } from './edit.ts';
import { pathOfDiffHeader } from './path-line.ts';

export interface DiffRead {
  edits: Edit[];
  problems: string[];
  /** Index of the first line after the diff. */
  end: number;
}

const hunkHeader = /^@@\s*-(\d+)(?:,\d+)?\s+\+(\d+)(?:,\d+)?\s*@@/;
const gitPreamble = /^(?:index |new file mode |deleted file mode |old mode |new mode |similarity index |rename from |rename to |Binary files )/;

export function isFileHeader(lines: readonly string[], index: number): boolean {
  return (lines[index]?.startsWith('--- ') ?? false) && (lines[index + 1]?.startsWith('+++ ') ?? false);
}

export function startsDiff(lines: readonly string[], index: number): boolean {
  return (lines[index]?.startsWith('diff --git ') ?? false) || isFileHeader(lines, index);
}

function isHunkLine(line: string | undefined): boolean {
  return line !== undefined && (line.startsWith(' ') || line.startsWith('+') || line.startsWith('-') || line.startsWith('\\'));
}

/**
 * Read unified-diff files and hunks from lines[start, end). Hunk line counts are ignored (models
 * miscount): a hunk runs to the next hunk, file header or the end. Inside a fence an unprefixed line
 * is context whose leading space was lost; outside one it ends the diff, as does a blank line that
 * no diff line follows.
 */
export function readUnifiedDiff(
  lines: readonly string[],
  start: number,
  end: number,
  options: { fenced: boolean; defaultPath?: string; knownPaths: readonly string[] },
): DiffRead {
  const edits: Edit[] = [];
  const problems: string[] = [];
  let path = options.defaultPath;
  let creating = false;
  let index = start;
  while (index < end) {
    const line = lines[index]!;
    if (line.startsWith('diff --git ')) {
      const named = /^diff --git (?:"?a\/)?(.+?)"? (?:"?b\/)?(.+?)"?$/.exec(line);
      path = named ? pathOfDiffHeader(named[2]!, options.knownPaths) : path;
      creating = false;
      index++;
    } else if (gitPreamble.test(line)) {
      if (line.startsWith('new file mode')) creating = true;
      index++;
    } else if (isFileHeader(lines, index)) {
      const oldPath = pathOfDiffHeader(line.slice(4), options.knownPaths);
      const newPath = pathOfDiffHeader(lines[index + 1]!.slice(4), options.knownPaths);
      creating = oldPath === '/dev/null';
      path = creating ? newPath : newPath === '/dev/null' ? oldPath : newPath;
      if (newPath === '/dev/null') problems.push(`The diff deletes ${oldPath}; deleting files is not supported: change the file instead.`);
      index += 2;
    } else if (line.startsWith('@@')) {
      const hunk = readHunk(lines, index + 1, end, options.fenced);
      const header = hunkHeader.exec(line);
      if (path === undefined) {
        problems.push('A diff hunk has no file header (--- a/path and +++ b/path before the @@ line); it was ignored.');
      } else if (creating) {
        edits.push({ kind: 'create', path, content: joinEditText(hunk.added, hunk.addedNoNewline), format: 'unified-diff' });
      } else if (hunk.old.join('\n') !== hunk.new.join('\n') || hunk.oldNoNewline !== hunk.newNoNewline) {
        const edit: Edit = {
          kind: 'replace',
          path,
          search: joinEditText(hunk.old, hunk.oldNoNewline),
          replace: joinEditText(hunk.new, hunk.newNoNewline),
          format: 'unified-diff',
        };
        if (header) edit.lineHint = Number(header[1]);
        edits.push(edit);
      }
      index = hunk.end;
    } else if (options.fenced) {
      index++;
    } else {
      break;
    }
  }
  return { edits, problems, end: index };
}

function joinEditText(lines: readonly string[], noFinalNewline: boolean): string {
  if (lines.length === 0) return '';
  return lines.join('\n') + (noFinalNewline ? '' : '\n');
}

interface Hunk {
  old: string[];
  new: string[];
  added: string[];
  oldNoNewline: boolean;
  newNoNewline: boolean;
  addedNoNewline: boolean;
  end: number;
}

function readHunk(lines: readonly string[], start: number, end: number, fenced: boolean): Hunk {
  const hunk: Hunk = { old: [], new: [], added: [], oldNoNewline: false, newNoNewline: false, addedNoNewline: false, end: start };
  let index = start;
  let last: 'context' | 'old' | 'new' = 'context';
  let pendingBlank = 0;
  const flushBlanks = (): void => {
    for (; pendingBlank > 0; pendingBlank--) {
      hunk.old.push('');
      hunk.new.push('');
    }
  };
  while (index < end) {
    const line = lines[index]!;
    if (line.startsWith('@@') || startsDiff(lines, index)) break;
    if (line === '') {
      // Blank context whose space was stripped, or the end of the hunk: it depends on what follows.
      pendingBlank++;
      index++;
      continue;
    }
    if (!isHunkLine(line) && !fenced) break;
    if (pendingBlank > 0) flushBlanks();
    if (line.startsWith('\\')) {
      if (last === 'old') hunk.oldNoNewline = true;
      else if (last === 'new') hunk.newNoNewline = hunk.addedNoNewline = true;
      else hunk.oldNoNewline = hunk.newNoNewline = true;
    } else if (line.startsWith('-')) {
      hunk.old.push(line.slice(1));
      last = 'old';
    } else if (line.startsWith('+')) {
      hunk.new.push(line.slice(1));
      hunk.added.push(line.slice(1));
      last = 'new';
    } else {
      const text = line.startsWith(' ') ? line.slice(1) : line;
      hunk.old.push(text);
      hunk.new.push(text);
      last = 'context';
    }
    index++;
  }
  // Trailing blank lines separate the diff from what follows; they are not context.
  hunk.end = index - (fenced ? 0 : pendingBlank);
  return hunk;
}
