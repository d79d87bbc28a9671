/** Most characters a path may have. */
export const MAX_PATH_LENGTH = 300;

/**
 * Why a path may not be read or written, or undefined when it may. Paths are repository-relative
 * with forward slashes, in Unicode NFC; any other character is allowed (brackets, spaces, quotes,
 * non-ASCII), since the patch quotes names the way git does. Refused: what could leave the
 * repository or reach into .git, control characters, and a backslash (a separator on Windows).
 */
export function unsafePathReason(path: string): string | undefined {
  if (path.trim() === '') return 'the path is empty';
  if (path.length > MAX_PATH_LENGTH) return `the path is longer than ${MAX_PATH_LENGTH} characters`;
  // eslint-disable-next-line no-control-regex -- control characters are exactly what this refuses
  if (/[\u0000-\u001f\u007f-\u009f]/.test(path)) return 'the path contains a control character';
  if (path.includes('\\')) return 'the path contains a backslash; separate folders with /';
  if (path.startsWith('/') || path.startsWith('~') || /^[A-Za-z]:/.test(path)) {
    return 'the path is absolute; use a path relative to the repository root';
  }
  const segments = path.split('/');
  if (segments.includes('..')) return 'the path leaves the repository (..)';
  if (segments.some((segment) => segment === '' || segment === '.')) return 'the path has an empty or "." segment';
  if (segments.some((segment) => segment.toLowerCase() === '.git')) return 'the path is inside .git';
  if (path.normalize('NFC') !== path) return 'the path is not in Unicode NFC (composed) form';
  return undefined;
}
