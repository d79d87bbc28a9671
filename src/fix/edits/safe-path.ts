/**
 * Why a path may not be written, or undefined when it may. Paths are repository-relative with
 * forward slashes; anything that could leave the repository or reach into .git is refused.
 */
export function unsafePathReason(path: string): string | undefined {
  if (path.trim() === '') return 'the path is empty';
  // eslint-disable-next-line no-control-regex -- control characters are exactly what this refuses
  if (/[\u0000-\u001f\u007f"\\]/.test(path)) return 'the path contains a control character, a quote or a backslash';
  if (path.startsWith('/') || path.startsWith('~') || /^[A-Za-z]:/.test(path)) {
    return 'the path is absolute; use a path relative to the repository root';
  }
  const segments = path.split('/');
  if (segments.includes('..')) return 'the path leaves the repository (..)';
  if (segments.some((segment) => segment === '' || segment === '.')) return 'the path has an empty or "." segment';
  if (segments.some((segment) => segment.toLowerCase() === '.git')) return 'the path is inside .git';
  return undefined;
}
