import type { Edit } from './edit.ts';
import { pathOfLine } from './path-line.ts';

export const searchMarker = /^\s*<{5,9} ?SEARCH\b.*$/;
const dividerMarker = /^\s*={5,9}\s*$/;
const replaceMarker = /^\s*>{5,9} ?REPLACE\b.*$/;
const fenceOpening = /^\s*(?:`{3,}|~{3,})\S/;

export interface SearchReplaceRead {
  edits: Edit[];
  problems: string[];
  /** Index of the first line after the last block read. */
  end: number;
}

/**
 * Read SEARCH/REPLACE blocks in lines[start, end). A block's file is the path line just before
 * its SEARCH marker, else `defaultPath` (the fence's info string or the line before the fence),
 * else the previous block's file in the same fence, else the only known file. Nothing is carried
 * over from another fence: a block that does not say its file is a problem, not a guess.
 */
export function readSearchReplace(
  lines: readonly string[],
  start: number,
  end: number,
  options: {
    defaultPath?: string;
    knownPaths: readonly string[];
    onlyOneBlock?: boolean;
    /** The closing line of the enclosing fence: between blocks it ends the reading; inside a block it is content. */
    closer?: RegExp;
  },
): SearchReplaceRead {
  const edits: Edit[] = [];
  const problems: string[] = [];
  let previousPath: string | undefined;
  let pendingPath: string | undefined;
  let index = start;
  while (index < end) {
    const line = lines[index]!;
    if (options.closer?.test(line)) break;
    if (options.closer && fenceOpening.test(line)) {
      // A fence opening between blocks means the enclosing fence was never closed: which block is whose is unclear.
      problems.push('A fence opens before the previous one was closed; close every fence (```) after its >>>>>>> REPLACE line.');
      break;
    }
    if (!searchMarker.test(line)) {
      // The latest path line names the next block, even with prose between them.
      pendingPath = pathOfLine(line, options.knownPaths) ?? pendingPath;
      index++;
      continue;
    }
    const path = pendingPath ?? options.defaultPath ?? previousPath ?? (options.knownPaths.length === 1 ? options.knownPaths[0] : undefined);
    const block = readBlock(lines, index + 1, end);
    const where = path ? ` for ${path}` : '';
    if (block.problem) {
      problems.push(`A SEARCH/REPLACE block${where} ${block.problem}; it was ignored. End every block with ======= and >>>>>>> REPLACE lines.`);
    } else if (path === undefined) {
      problems.push('A SEARCH/REPLACE block does not say which file it edits; put the file path alone on the line before the block.');
    } else {
      const search = joinBlock(block.search);
      const replace = joinBlock(block.replace);
      if (search === '') edits.push({ kind: 'create', path, content: replace, format: 'search-replace' });
      else edits.push({ kind: 'replace', path, search, replace, format: 'search-replace' });
      previousPath = path;
    }
    pendingPath = undefined;
    index = block.end;
    if (options.onlyOneBlock) break;
  }
  return { edits, problems, end: index };
}

function joinBlock(lines: readonly string[]): string {
  return lines.length === 0 ? '' : lines.join('\n') + '\n';
}

interface Block {
  search: string[];
  replace: string[];
  end: number;
  problem?: string;
}

function readBlock(lines: readonly string[], start: number, end: number): Block {
  const search: string[] = [];
  const replace: string[] = [];
  let index = start;
  while (index < end && !dividerMarker.test(lines[index]!)) {
    if (searchMarker.test(lines[index]!) || replaceMarker.test(lines[index]!)) {
      return { search, replace, end: index, problem: 'has no ======= line between its SEARCH and REPLACE parts' };
    }
    search.push(lines[index++]!);
  }
  if (index >= end) return { search, replace, end: index, problem: 'is not terminated (no ======= line)' };
  index++;
  while (index < end && !replaceMarker.test(lines[index]!)) {
    if (searchMarker.test(lines[index]!)) return { search, replace, end: index, problem: 'is not terminated (no >>>>>>> REPLACE line)' };
    replace.push(lines[index++]!);
  }
  if (index >= end) return { search, replace, end: index, problem: 'is not terminated (no >>>>>>> REPLACE line)' };
  return { search, replace, end: index + 1 };
}
