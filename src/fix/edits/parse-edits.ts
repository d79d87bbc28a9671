import type { Edit } from './edit.ts';
import { pathOfInfo, pathOfLine } from './path-line.ts';
import { readSearchReplace, searchMarker } from './parse-search-replace.ts';
import { readUnifiedDiff, startsDiff } from './parse-unified-diff.ts';

export interface ParsedReply {
  edits: Edit[];
  /** The reply's prose with every edit block removed, trimmed: the model's explanation. */
  explanation: string;
  /** Blocks that looked like edits but could not be read (unterminated SEARCH block, diff without a path...), in words for the model. */
  problems: string[];
}

interface Fence {
  /** Index of the opening line. */
  open: number;
  /** Index of the closing line, or lines.length when the reply ends inside the fence. */
  close: number;
  info: string;
  /** A line that closes this fence; one that merely opens another fence does not. */
  closer: RegExp;
  /** A line that would open a nested fence of the same kind, which a closing line would end early. */
  nested: RegExp;
}

const fenceOpening = /^\s{0,3}(`{3,}|~{3,})(.*)$/;

/**
 * Find the edits in a model's reply: unified diffs, SEARCH/REPLACE blocks and whole files in
 * fences, fenced or bare, in any mix. `knownPaths` helps attribute a fenced whole-file block or a
 * search/replace block to a file. Edits come out in reply order; a reply with problems should be
 * refused as a whole, since the edits read may depend on the ones that could not be.
 */
export function parseEdits(reply: string, knownPaths: readonly string[]): ParsedReply {
  const lines = reply.replace(/\r\n?/g, '\n').split('\n');
  const edits: Edit[] = [];
  const problems: string[] = [];
  const consumed = new Array<boolean>(lines.length).fill(false);
  const consume = (from: number, to: number): void => {
    for (let index = from; index < to && index < lines.length; index++) consumed[index] = true;
  };
  let index = 0;
  while (index < lines.length) {
    const line = lines[index]!;
    const fence = fenceAt(lines, index);
    if (fence) {
      const before = pathBefore(lines, index, consumed, knownPaths);
      const named = pathOfInfo(fence.info, knownPaths) ?? before?.path;
      const bodyStart = fence.open + 1;
      const bodyEnd = fence.close;
      const found = readFenced(lines, bodyStart, bodyEnd, fence, named, knownPaths);
      // Search/replace blocks may hold fences of their own (a README's code): the fence ends after the last block.
      if (found?.end !== undefined) fence.close = found.end;
      if (found) {
        edits.push(...found.edits);
        problems.push(...found.problems);
        consume(fence.open, fence.close + 1);
        if (before && (found.edits.length > 0 || found.problems.length > 0)) consume(before.index, before.index + 1);
      }
      index = fence.close + 1;
    } else if (searchMarker.test(line)) {
      const before = pathBefore(lines, index, consumed, knownPaths);
      const read = readSearchReplace(lines, index, lines.length, { defaultPath: before?.path, knownPaths, onlyOneBlock: true });
      edits.push(...read.edits);
      problems.push(...read.problems);
      if (before) consume(before.index, before.index + 1);
      consume(index, read.end);
      index = Math.max(read.end, index + 1);
    } else if (startsDiff(lines, index)) {
      const read = readUnifiedDiff(lines, index, lines.length, { fenced: false, knownPaths });
      edits.push(...read.edits);
      problems.push(...read.problems);
      consume(index, read.end);
      index = Math.max(read.end, index + 1);
    } else {
      index++;
    }
  }
  const explanation = lines
    .filter((_, line) => !consumed[line])
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { edits, explanation, problems };
}

function fenceAt(lines: readonly string[], index: number): Fence | undefined {
  const opening = fenceOpening.exec(lines[index]!);
  if (!opening) return undefined;
  const marker = opening[1]!;
  const info = opening[2]!;
  // A backtick fence's info string may not contain backticks (CommonMark); "```a```" is inline code.
  if (marker.startsWith('`') && info.includes('`')) return undefined;
  // The closing line may not be indented more than the opening one: in a diff, " ```" is a context line.
  const indent = /^\s*/.exec(lines[index]!)![0].length;
  const character = marker[0] === '`' ? '`' : '~';
  const closer = new RegExp(`^\\s{0,${indent}}${character}{${marker.length},}\\s*$`);
  const nested = new RegExp(`^\\s*${character}{${marker.length},}\\S`);
  let close = index + 1;
  while (close < lines.length && !closer.test(lines[close]!)) close++;
  return { open: index, close, info, closer, nested };
}

/** The nearest non-blank line before `index`, when it is a path line nobody has used. */
function pathBefore(
  lines: readonly string[],
  index: number,
  consumed: readonly boolean[],
  knownPaths: readonly string[],
): { index: number; path: string } | undefined {
  let before = index - 1;
  while (before >= 0 && lines[before]!.trim() === '') before--;
  if (before < 0 || consumed[before]) return undefined;
  const path = pathOfLine(lines[before]!, knownPaths);
  return path === undefined ? undefined : { index: before, path };
}

/** What a fenced block holds, or undefined when it is ordinary code in the prose. */
function readFenced(
  lines: readonly string[],
  start: number,
  end: number,
  fence: Fence,
  named: string | undefined,
  knownPaths: readonly string[],
): { edits: Edit[]; problems: string[]; end?: number } | undefined {
  const body = lines.slice(start, end);
  const unterminated = end >= lines.length;
  if (body.some((line) => searchMarker.test(line))) {
    return readSearchReplace(lines, start, lines.length, { defaultPath: named, knownPaths, closer: fence.closer });
  }
  const info = fence.info.trim().toLowerCase();
  const isDiff = /^(diff|patch|udiff)\b/.test(info) || body.some((_, offset) => startsDiff(lines, start + offset)) || body[0]?.startsWith('@@');
  if (isDiff) {
    const read = readUnifiedDiff(lines, start, end, { fenced: true, defaultPath: named, knownPaths });
    if (read.edits.length === 0 && read.problems.length === 0) read.problems.push('A diff block has no hunks (@@ lines); it was ignored.');
    return read;
  }
  if (named === undefined) return undefined;
  if (!knownPaths.includes(named)) {
    return { edits: [], problems: [`A whole-file block names ${named}, which was not given; to create a file use an empty SEARCH block.`] };
  }
  if (unterminated) return { edits: [], problems: [`The block for ${named} is not closed (the reply may be cut off); it was ignored.`] };
  if (body.some((line) => fence.nested.test(line))) {
    return {
      edits: [],
      problems: [
        `The whole-file block for ${named} contains code fences of its own, so where it ends is unclear; ` +
          'use SEARCH/REPLACE blocks, or a longer fence (````) around the file.',
      ],
    };
  }
  return { edits: [{ kind: 'whole-file', path: named, content: body.length === 0 ? '' : body.join('\n') + '\n' }], problems: [] };
}
