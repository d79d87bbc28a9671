import { gitUnquotedName } from './git-path-quote.ts';

/**
 * Recognising file paths where models put them: alone on a line (bare, `quoted`, **bold**,
 * "# heading", "File: x", with a trailing colon), in a fence's info string, in diff headers.
 */

/** Path-shaped without spaces: letters (any script), digits, _ - . / @ + and brackets (app/[slug]/page.tsx), with a slash or an extension. */
const pathShape = /^[\p{L}\p{M}\p{N}_@+\-./[\]()]+$/u;

function looksLikePath(candidate: string): boolean {
  if (!pathShape.test(candidate)) return false;
  if (/^[\d.]+$/.test(candidate)) return false;
  return candidate.includes('/') || /\.[A-Za-z0-9_-]+$/.test(candidate);
}

/** Drop a leading "./" models sometimes add. */
export function cleanPath(path: string): string {
  return path.startsWith('./') ? path.slice(2) : path;
}

/** A line that consists of a path and decoration only, as the path; known paths win over mere shapes. */
export function pathOfLine(line: string, knownPaths: readonly string[]): string | undefined {
  let text = line.trim();
  if (text === '' || text.length > 300) return undefined;
  text = text.replace(/^#{1,6}\s+/, '').replace(/^(?:[-*]|\d+\.)\s+/, '');
  text = text.replace(/^(?:file(?:name)?|path)\s*:\s*/i, '');
  for (let round = 0; round < 3; round++) {
    text = text.replace(/:$/, '').trim();
    const unwrapped = /^(\*\*|__|`|\*|_)(.+)\1$/.exec(text);
    if (!unwrapped) break;
    text = unwrapped[2]!.trim();
  }
  text = cleanPath(text);
  if (knownPaths.includes(text)) return text;
  return looksLikePath(text) ? text : undefined;
}

/** A path named in a fence's info string ("ts src/a.ts", "src/a.ts", "python:app/x.py"). */
export function pathOfInfo(info: string, knownPaths: readonly string[]): string | undefined {
  const trimmed = info.trim();
  if (trimmed === '') return undefined;
  if (knownPaths.includes(cleanPath(trimmed))) return cleanPath(trimmed);
  for (const token of trimmed.split(/\s+/)) {
    const candidates = [token, token.slice(token.lastIndexOf(':') + 1)].map(cleanPath);
    const known = candidates.find((candidate) => knownPaths.includes(candidate));
    if (known) return known;
    const shaped = candidates.find(looksLikePath);
    if (shaped) return shaped;
  }
  return undefined;
}

/** The path of a "--- x" / "+++ x" header: timestamps dropped, git's quoting read back, git's a/ b/ prefix dropped unless the path itself starts so. */
export function pathOfDiffHeader(raw: string, knownPaths: readonly string[]): string {
  let path = raw.replace(/\t.*$/, '').trim();
  path = gitUnquotedName(path);
  if (path === '/dev/null') return path;
  path = cleanPath(path);
  if (knownPaths.includes(path)) return path;
  if (/^[ab]\//.test(path)) return path.slice(2);
  return path;
}
