import type { Edit } from './edit.ts';
import type { SourceFile } from './source-file.ts';
import { elidedLines } from './elision.ts';
import { findMatches, type Match } from './find-match.ts';
import { unsafePathReason } from './safe-path.ts';
import { spliceMatch } from './splice-match.ts';
import { dominantEol, editLines, joinLines, splitLines, type TextLine } from './text-lines.ts';

export interface ApplyOptions {
  /** Paths that must not change (e.g. the tests a fix must make pass). */
  readOnly?: ReadonlySet<string>;
}

export type ApplyOutcome =
  | {
      ok: true;
      /** Every given file, changed or not, plus created ones, in the given order then created. */
      files: SourceFile[];
      /** Changed or created paths. */
      touched: string[];
    }
  | {
      ok: false;
      /** One sentence per refused edit, written for the model: which file, why, what to do. */
      problems: string[];
    };

/** Refusal of one edit: the sentence for the model. */
class Refusal extends Error {}

interface Applied {
  /** 1-based line the diff hunk claimed, before this reply changed anything. */
  hint: number;
  delta: number;
}

/**
 * Apply edits in order, each on the result of the previous ones, all or nothing: one edit that
 * cannot be placed exactly once refuses the whole reply, and no given file changes.
 */
export function applyEdits(files: readonly SourceFile[], edits: readonly Edit[], options: ApplyOptions = {}): ApplyOutcome {
  if (edits.length === 0) {
    return { ok: false, problems: ['The reply contains no edits. Reply with SEARCH/REPLACE blocks (or a unified diff) for the files to change.'] };
  }
  const contents = new Map(files.map((file) => [file.path, file.content]));
  const originals = new Map(contents);
  const created: string[] = [];
  const failed = new Set<string>();
  const problems: string[] = [];
  const hunks = new Map<string, Applied[]>();
  edits.forEach((edit, index) => {
    if (failed.has(edit.path)) return;
    try {
      // A model quoting a file it was given, unchanged, has not edited it, even when it is read-only.
      if (edit.kind === 'whole-file' && sameText(edit.content, contents.get(edit.path))) return;
      checkPath(edit, contents, options.readOnly);
      if (edit.kind === 'create') createFile(edit, contents, created);
      else if (edit.kind === 'whole-file') replaceWholeFile(edit, contents);
      else replaceOnce(edit, contents, hunks);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      const label = edits.length > 1 ? `Edit ${index + 1} (${edit.path})` : edit.path;
      problems.push(`${label}: ${error.message}`);
      failed.add(edit.path);
    }
  });
  if (problems.length > 0) return { ok: false, problems };
  const order = [...files.map((file) => file.path), ...created];
  const touched = order.filter((path) => contents.get(path) !== originals.get(path));
  if (touched.length === 0) {
    return { ok: false, problems: ['The edits leave every file as it was. Change the lines that need to change.'] };
  }
  return { ok: true, files: order.map((path) => ({ path, content: contents.get(path)! })), touched };
}

function sameText(content: string, original: string | undefined): boolean {
  const normal = (text: string): string => text.replace(/\r\n/g, '\n').replace(/\s+$/, '');
  return original !== undefined && normal(content) === normal(original);
}

function checkPath(edit: Edit, contents: ReadonlyMap<string, string>, readOnly: ReadonlySet<string> | undefined): void {
  const unsafe = unsafePathReason(edit.path);
  if (unsafe) throw new Refusal(`refused because ${unsafe}. Edit only the given files, by their paths as given.`);
  if (readOnly?.has(edit.path)) {
    throw new Refusal('this file is read-only (the fix must not change it). Change the other files so that it is satisfied as it is.');
  }
  if (edit.kind !== 'create' && !contents.has(edit.path)) {
    const given = [...contents.keys()].slice(0, 8).join(', ');
    throw new Refusal(
      `this file was not given, so it cannot be edited. Edit only the given files (${given}); to create a new file use an empty SEARCH block.`,
    );
  }
}

function createFile(edit: Extract<Edit, { kind: 'create' }>, contents: Map<string, string>, created: string[]): void {
  const existing = contents.get(edit.path);
  if (existing !== undefined && existing !== '') {
    throw new Refusal(
      'the file already exists and is not empty, so it cannot be created. ' +
        'Change it with SEARCH/REPLACE blocks whose SEARCH part holds the lines to change.',
    );
  }
  if (edit.content.trim() === '') throw new Refusal('the new file would be empty. Give its full content in the REPLACE part.');
  refuseElisions(edit.content, '');
  if (existing === undefined) created.push(edit.path);
  contents.set(edit.path, edit.content);
}

function replaceWholeFile(edit: Extract<Edit, { kind: 'whole-file' }>, contents: Map<string, string>): void {
  const original = contents.get(edit.path)!;
  refuseElisions(edit.content, original);
  const lines = splitLines(original);
  const eol = dominantEol(lines);
  // A fence always ends its last line; the file keeps the final newline it had (or not).
  const next = editLines(edit.content).map((text) => ({ text, eol }));
  const last = next.at(-1);
  if (last && lines.length > 0 && lines.at(-1)!.eol === '') last.eol = '';
  contents.set(edit.path, joinLines(next));
}

function replaceOnce(edit: Extract<Edit, { kind: 'replace' }>, contents: Map<string, string>, hunks: Map<string, Applied[]>): void {
  const original = contents.get(edit.path)!;
  refuseElisions(edit.replace, original);
  const lines = splitLines(original);
  const search = editLines(edit.search);
  const replace = editLines(edit.replace);
  if (search.every((line) => line.trim() === '')) {
    if (original.trim() !== '') {
      throw new Refusal(
        'the edit has no lines to find (an empty SEARCH part, or a diff hunk without context), but the file is not empty. ' +
          'Copy the lines to change, exactly, into the SEARCH part.',
      );
    }
    contents.set(edit.path, edit.replace);
    return;
  }
  const found = findMatches(
    lines.map((line) => line.text),
    search,
    replace,
  );
  if (!found)
    throw new Refusal(
      notFound(
        lines.map((line) => line.text),
        search,
      ),
    );
  const match = pick(found.matches, edit, hunks.get(edit.path) ?? []);
  const eol = dominantEol(lines);
  const middle = spliceMatch(lines, match, search, replace, eol);
  const next = [...lines.slice(0, match.start), ...middle, ...lines.slice(match.end)];
  fixEndings(next, lines, match, edit, eol);
  contents.set(edit.path, joinLines(next));
  if (edit.lineHint !== undefined) {
    hunks.set(edit.path, [...(hunks.get(edit.path) ?? []), { hint: edit.lineHint, delta: middle.length - (match.end - match.start) }]);
  }
}

/** One match is the place; several are a guess unless the diff hunk's line number names exactly one of them. */
function pick(matches: readonly Match[], edit: Extract<Edit, { kind: 'replace' }>, earlier: readonly Applied[]): Match {
  if (matches.length === 1) return matches[0]!;
  if (edit.lineHint !== undefined) {
    const hint = edit.lineHint;
    // Earlier hunks of this diff moved the lines below them; the hunk's number is from before.
    const line = hint + earlier.filter((applied) => applied.hint < hint).reduce((sum, applied) => sum + applied.delta, 0);
    const pointed = matches.filter((match) => match.start + 1 === line);
    if (pointed.length === 1) return pointed[0]!;
  }
  const places = matches
    .map((match) => match.start + 1)
    .slice(0, 5)
    .join(', ');
  throw new Refusal(
    `the SEARCH text matches ${matches.length} places (lines ${places}), so where to apply it is ambiguous. ` +
      'Add surrounding lines to the SEARCH part until it matches exactly one place.',
  );
}

/** Lines in the middle end with the file's ending; the last line ends as it did unless a diff says otherwise. */
function fixEndings(next: TextLine[], before: readonly TextLine[], match: Match, edit: Extract<Edit, { kind: 'replace' }>, eol: string): void {
  for (let index = 0; index + 1 < next.length; index++) if (next[index]!.eol === '') next[index] = { ...next[index]!, eol };
  const last = next.at(-1);
  if (!last || match.end < before.length) return;
  const hadFinal = before.at(-1)!.eol !== '';
  const addsFinal = !edit.search.endsWith('\n') && edit.replace.endsWith('\n');
  const dropsFinal = edit.search.endsWith('\n') && edit.replace !== '' && !edit.replace.endsWith('\n');
  const final = addsFinal ? true : dropsFinal ? false : hadFinal;
  next[next.length - 1] = { ...last, eol: final ? (hadFinal ? before.at(-1)!.eol : eol) : '' };
}

function refuseElisions(text: string, original: string): void {
  const elided = elidedLines(text, original);
  if (elided.length === 0) return;
  throw new Refusal(
    `the new text leaves code out (${elided.map((line) => `"${line}"`).join(', ')}), which would delete that code. ` +
      'Write out every line in full, or make a smaller SEARCH/REPLACE edit.',
  );
}

function notFound(file: readonly string[], search: readonly string[]): string {
  const present = new Set(file.map((line) => line.trim()));
  const missing = search.map((line, index) => ({ line, index })).filter(({ line }) => line.trim() !== '' && !present.has(line.trim()));
  const advice = 'Copy the SEARCH lines exactly from the file as given.';
  if (missing.length === 0) {
    return `the SEARCH lines were not found together: each exists in the file, but not in this order. ${advice}`;
  }
  const shown = missing
    .slice(0, 2)
    .map(({ line, index }) => `line ${index + 1} "${truncate(line.trim())}"`)
    .join(', ');
  const more = missing.length > 2 ? ` and ${missing.length - 2} more` : '';
  return `the SEARCH text was not found: ${shown}${more} of the SEARCH part ${missing.length === 1 ? 'is' : 'are'} not in the file. ${advice}`;
}

function truncate(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
