/**
 * Where a search text sits in a file, tolerating what models get wrong without guessing: each
 * matcher is stricter than the next, and the first that finds anything decides. A match maps every
 * search line to the file line it stands for (-1 for a blank search line the file does not have),
 * and says how to re-indent new lines so they sit where the matched ones do.
 */
export interface Match {
  /** First and one-past-last file line the match covers. */
  start: number;
  end: number;
  /** For each search line, the file line it matched, or -1. */
  map: number[];
  reindent: (line: string) => string;
}

export interface MatcherResult {
  matcher: 'exact' | 'trailing-whitespace' | 'blank-lines' | 'indentation';
  matches: Match[];
}

const keep = (line: string): string => line;
const isBlank = (line: string): boolean => line.trim() === '';

/** The first matcher that finds the search lines in the file, with all its matches; undefined when none does. */
export function findMatches(file: readonly string[], search: readonly string[], replace: readonly string[]): MatcherResult | undefined {
  const matchers: Array<[MatcherResult['matcher'], () => Match[]]> = [
    ['exact', () => consecutive(file, search, (a, b) => a === b)],
    ['trailing-whitespace', () => consecutive(file, search, (a, b) => a.trimEnd() === b.trimEnd())],
    ['blank-lines', () => ignoringBlankLines(file, search)],
    ['indentation', () => indentationDrift(file, search, replace)],
  ];
  for (const [matcher, find] of matchers) {
    const matches = find();
    if (matches.length > 0) return { matcher, matches };
  }
  return undefined;
}

function consecutive(file: readonly string[], search: readonly string[], same: (fileLine: string, searchLine: string) => boolean): Match[] {
  const matches: Match[] = [];
  for (let start = 0; start + search.length <= file.length; start++) {
    if (search.every((line, offset) => same(file[start + offset]!, line))) {
      matches.push({ start, end: start + search.length, map: search.map((_, offset) => start + offset), reindent: keep });
    }
  }
  return matches;
}

/** Non-blank search lines on consecutive non-blank file lines; blank lines pair up where both have them. */
function ignoringBlankLines(file: readonly string[], search: readonly string[]): Match[] {
  const wanted = search.map((line, index) => ({ line: line.trimEnd(), index })).filter(({ line }) => line.trim() !== '');
  if (wanted.length === 0) return [];
  const present = file.map((line, index) => ({ line: line.trimEnd(), index })).filter(({ line }) => line.trim() !== '');
  const matches: Match[] = [];
  for (let start = 0; start + wanted.length <= present.length; start++) {
    if (!wanted.every(({ line }, offset) => present[start + offset]!.line === line)) continue;
    const map = new Array<number>(search.length).fill(-1);
    wanted.forEach(({ index }, offset) => (map[index] = present[start + offset]!.index));
    pairBlankLines(file, search, map);
    const used = map.filter((line) => line >= 0);
    matches.push({ start: Math.min(...used), end: Math.max(...used) + 1, map, reindent: keep });
  }
  return matches;
}

/** Pair blank search lines with blank file lines in the same gap, and at the edges with blank lines next to the match. */
function pairBlankLines(file: readonly string[], search: readonly string[], map: number[]): void {
  const anchors = map.map((line, index) => ({ line, index })).filter(({ line }) => line >= 0);
  const first = anchors[0]!;
  const last = anchors.at(-1)!;
  for (let index = first.index - 1, line = first.line - 1; index >= 0 && line >= 0 && isBlank(file[line]!); index--, line--) map[index] = line;
  for (let index = last.index + 1, line = last.line + 1; index < search.length && line < file.length && isBlank(file[line]!); index++, line++) {
    map[index] = line;
  }
  for (let anchor = 0; anchor + 1 < anchors.length; anchor++) {
    const from = anchors[anchor]!;
    const to = anchors[anchor + 1]!;
    for (let index = from.index + 1, line = from.line + 1; index < to.index && line < to.line; index++, line++) map[index] = line;
  }
}

const leading = (line: string): string => /^[ \t]*/.exec(line)![0];

/**
 * Every non-blank search line is the file line with the same text after one consistent change of
 * indentation: a fixed prefix more or less, or the same depth written in spaces instead of tabs.
 */
function indentationDrift(file: readonly string[], search: readonly string[], replace: readonly string[]): Match[] {
  const nonBlank = search.filter((line) => !isBlank(line));
  if (nonBlank.length === 0) return [];
  const matches: Match[] = [];
  for (let start = 0; start + search.length <= file.length; start++) {
    const lines = file.slice(start, start + search.length);
    const sameText = search.every((line, offset) => (isBlank(line) ? isBlank(lines[offset]!) : line.trim() === lines[offset]!.trim()));
    if (!sameText) continue;
    const pairs = search.flatMap((line, offset) => (isBlank(line) ? [] : [[leading(line), leading(lines[offset]!)] as const]));
    const indent = prefixDrift(pairs) ?? styleDrift(pairs, search.concat(replace), file);
    if (indent === undefined) continue;
    matches.push({ start, end: start + search.length, map: search.map((_, offset) => start + offset), reindent: indent });
  }
  return matches;
}

/** The file's indentation is the search's plus (or minus) one fixed prefix on every line. */
function prefixDrift(pairs: ReadonlyArray<readonly [string, string]>): ((line: string) => string) | undefined {
  const [searchIndent, fileIndent] = pairs[0]!;
  if (fileIndent.length > searchIndent.length && fileIndent.endsWith(searchIndent)) {
    const prefix = fileIndent.slice(0, fileIndent.length - searchIndent.length);
    if (pairs.every(([model, actual]) => actual === prefix + model)) return (line) => (isBlank(line) ? line : prefix + line);
  }
  if (searchIndent.length > fileIndent.length && searchIndent.endsWith(fileIndent)) {
    const prefix = searchIndent.slice(0, searchIndent.length - fileIndent.length);
    if (pairs.every(([model, actual]) => model === prefix + actual)) {
      return (line) => (line.startsWith(prefix) ? line.slice(prefix.length) : line.trimStart());
    }
  }
  return undefined;
}

/** The model wrote spaces where the file has tabs (or the reverse), possibly shifted by whole levels. */
function styleDrift(
  pairs: ReadonlyArray<readonly [string, string]>,
  modelLines: readonly string[],
  file: readonly string[],
): ((line: string) => string) | undefined {
  const modelStyle = styleOf(pairs.map(([model]) => model));
  const fileStyle = styleOf(pairs.map(([, actual]) => actual));
  if (modelStyle === undefined || fileStyle === undefined || modelStyle === fileStyle) return undefined;
  const modelUnit = modelStyle === 'tab' ? 1 : spaceUnit(modelLines);
  const fileUnit = fileStyle === 'tab' ? 1 : spaceUnit(file);
  if (modelUnit === undefined || fileUnit === undefined) return undefined;
  const levels = (indent: string, unit: number): number | undefined => (indent.length % unit === 0 ? indent.length / unit : undefined);
  let shift: number | undefined;
  for (const [model, actual] of pairs) {
    const modelLevel = levels(model, modelUnit);
    const fileLevel = levels(actual, fileUnit);
    if (modelLevel === undefined || fileLevel === undefined) return undefined;
    if (shift === undefined) shift = fileLevel - modelLevel;
    else if (shift !== fileLevel - modelLevel) return undefined;
  }
  const by = shift!;
  const unitText = fileStyle === 'tab' ? '\t' : ' '.repeat(fileUnit);
  return (line) => {
    if (isBlank(line)) return line;
    const indent = leading(line);
    const rest = line.slice(indent.length);
    const modelLevel = Math.floor(indent.replace(/\t/g, ' '.repeat(modelUnit)).length / modelUnit);
    return unitText.repeat(Math.max(0, modelLevel + by)) + rest;
  };
}

/** 'tab' or 'space' when every indented line uses only that character; undefined for mixed. */
function styleOf(indents: readonly string[]): 'tab' | 'space' | undefined {
  const used = indents.filter((indent) => indent !== '');
  if (used.length === 0) return undefined;
  if (used.every((indent) => /^\t+$/.test(indent))) return 'tab';
  if (used.every((indent) => /^ +$/.test(indent))) return 'space';
  return undefined;
}

/** The width of one indentation level in space-indented lines: the greatest common divisor of their indents. */
function spaceUnit(lines: readonly string[]): number | undefined {
  let unit = 0;
  for (const line of lines) {
    const width = /^ */.exec(line)![0].length;
    // Comment continuation lines (" * text") sit one space off the grid; they say nothing about the unit.
    if (width > 0 && !isBlank(line) && !line.trimStart().startsWith('*')) unit = gcd(unit, width);
  }
  return unit > 1 ? unit : undefined;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}
