/**
 * A file as lines that remember their own ending, so an edit can match on plain text while
 * untouched lines keep exactly the bytes they had (CRLF, LF, a missing final newline).
 */
export interface TextLine {
  text: string;
  /** '\n', '\r\n', or '' for a last line without a newline. */
  eol: string;
}

export function splitLines(content: string): TextLine[] {
  const lines: TextLine[] = [];
  let start = 0;
  while (start < content.length) {
    const newline = content.indexOf('\n', start);
    if (newline < 0) {
      lines.push({ text: content.slice(start), eol: '' });
      break;
    }
    const crlf = newline > start && content[newline - 1] === '\r';
    lines.push({ text: content.slice(start, crlf ? newline - 1 : newline), eol: crlf ? '\r\n' : '\n' });
    start = newline + 1;
  }
  return lines;
}

export function joinLines(lines: readonly TextLine[]): string {
  return lines.map((line) => line.text + line.eol).join('');
}

/** The ending most lines use; LF for a file with no line ending at all. */
export function dominantEol(lines: readonly TextLine[]): string {
  let crlf = 0;
  let lf = 0;
  for (const line of lines) {
    if (line.eol === '\r\n') crlf++;
    else if (line.eol === '\n') lf++;
  }
  return crlf > lf ? '\r\n' : '\n';
}

/** Lines of an edit's text, which is LF-only and ends with '\n' unless it says the file has no final newline. */
export function editLines(text: string): string[] {
  if (text === '') return [];
  const body = text.endsWith('\n') ? text.slice(0, -1) : text;
  return body.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}
