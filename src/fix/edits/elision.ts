/**
 * Lines with which a model leaves code out ("// ... existing code ...", "# rest of the file
 * unchanged"): applied literally they would delete the code they stand for.
 */
const ellipsis = '(?:\\.{3}|…)';
const commentStart = '(?://+|#+|--|;+|/\\*+|<!--|\\*)';
const elisionPatterns = [
  new RegExp(`^${ellipsis}$`),
  new RegExp(`^${commentStart}\\s*${ellipsis}`),
  new RegExp(`^${commentStart}.*${ellipsis}\\s*(?:\\*/|-->)?$`),
  new RegExp(`\\{\\s*${ellipsis}\\s*\\}`),
  new RegExp(`/\\*\\s*${ellipsis}\\s*\\*/`),
  new RegExp(
    `^${commentStart}.*\\b(?:existing code|rest of (?:the )?(?:file|code|function|class|method|module|implementation|component|object|test)s?|` +
      `(?:remains?|stays?|is|are|left) (?:the same|unchanged|as is)|unchanged|same as before|omitted|for brevity|` +
      `other (?:methods|functions|cases|tests|code|fields|properties))\\b`,
    'i',
  ),
];

export function isElision(line: string): boolean {
  const text = line.trim();
  return text !== '' && elisionPatterns.some((pattern) => pattern.test(text));
}

/** Elision lines of `text` that the original does not have, trimmed, at most three. */
export function elidedLines(text: string, original: string): string[] {
  const present = new Set(original.split(/\r?\n/).map((line) => line.trim()));
  const found: string[] = [];
  for (const line of text.split('\n')) {
    if (isElision(line) && !present.has(line.trim()) && !found.includes(line.trim())) found.push(line.trim());
    if (found.length === 3) break;
  }
  return found;
}
