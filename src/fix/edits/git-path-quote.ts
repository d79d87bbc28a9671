/** Bytes git writes as a letter escape inside a quoted name. */
const LETTER_ESCAPES: ReadonlyMap<number, string> = new Map([
  [0x07, 'a'],
  [0x08, 'b'],
  [0x09, 't'],
  [0x0a, 'n'],
  [0x0b, 'v'],
  [0x0c, 'f'],
  [0x0d, 'r'],
  [0x22, '"'],
  [0x5c, '\\'],
]);

function needsQuote(byte: number): boolean {
  return byte < 0x20 || byte === 0x22 || byte === 0x5c || byte >= 0x7f;
}

/**
 * `prefix` + `path` as git names it in a patch (core.quotePath, its default): as is, or in double
 * quotes with C escapes when it holds a quote, a backslash, a control character or any non-ASCII
 * byte, each of those bytes of its UTF-8 as an octal escape ("a/src/caf\303\251.js").
 */
export function gitQuotedName(prefix: string, path: string): string {
  const bytes = Buffer.from(prefix + path, 'utf8');
  if (!bytes.some(needsQuote)) return prefix + path;
  let quoted = '"';
  for (const byte of bytes) {
    const letter = LETTER_ESCAPES.get(byte);
    if (letter !== undefined) quoted += `\\${letter}`;
    else if (needsQuote(byte)) quoted += `\\${byte.toString(8).padStart(3, '0')}`;
    else quoted += String.fromCharCode(byte);
  }
  return `${quoted}"`;
}

/** A name git quoted, read back (C escapes, octal bytes as UTF-8); a name without quotes as it is. */
export function gitUnquotedName(name: string): string {
  if (name.length < 2 || !name.startsWith('"') || !name.endsWith('"')) return name;
  const bytes: number[] = [];
  const body = name.slice(1, -1);
  for (let index = 0; index < body.length; index++) {
    const char = body[index]!;
    if (char !== '\\' || index === body.length - 1) {
      bytes.push(...Buffer.from(char, 'utf8'));
      continue;
    }
    const next = body[++index]!;
    const octal = /^[0-3][0-7]{2}/.exec(body.slice(index, index + 3));
    if (octal) {
      bytes.push(parseInt(octal[0], 8));
      index += 2;
      continue;
    }
    const letter = [...LETTER_ESCAPES].find(([, escape]) => escape === next);
    bytes.push(letter ? letter[0] : next.charCodeAt(0));
  }
  return Buffer.from(bytes).toString('utf8');
}
