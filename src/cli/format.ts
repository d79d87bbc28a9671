import { formatUsd } from '../lib/money.ts';

/** USD for people: every significant digit kept, but at least and no more zeros than cents need ("$5.00", "$0.000345"). */
export function displayUsd(nano: number): string {
  const exact = formatUsd(nano);
  const trimmed = exact.replace(/0+$/, '');
  const [whole, fraction = ''] = trimmed.split('.');
  const amount = `${whole}.${fraction.padEnd(2, '0')}`;
  return amount.startsWith('-') ? `-$${amount.slice(1)}` : `$${amount}`;
}

/** An ISO instant to the minute, in UTC ("2025-01-31 18:05Z"); "-" for none. */
export function displayInstant(iso: string | null): string {
  return iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)}Z` : '-';
}

/** Left-aligned columns separated by two spaces, with a header row. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** One CSV field: quoted when it holds a comma, a quote or a line break, its quotes doubled (RFC 4180). */
function csvField(value: string | number | null): string {
  const text = value === null ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** CSV with a header row; a field's own line breaks stay inside its quotes. */
export function formatCsv(header: string[], rows: Array<Array<string | number | null>>): string {
  return [header, ...rows].map((row) => row.map(csvField).join(',')).join('\n');
}
