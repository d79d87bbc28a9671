/**
 * Amounts arrive as USD decimal strings with nine places ("12.500000000"). They are shown by
 * trimming zeros off the string, never through floating point; the chart's geometry uses integer
 * nano-dollars.
 */
export function usd(amount: string | null | undefined): string {
  if (amount === null || amount === undefined) return '—';
  const negative = amount.startsWith('-');
  const [whole, fraction = ''] = amount.replace('-', '').split('.');
  let shown = fraction.replace(/0+$/, '');
  if (shown.length < 2) shown = shown.padEnd(2, '0');
  return `${negative ? '-' : ''}$${whole}.${shown}`;
}

/** Integer nano-dollars of a USD decimal string. */
export function nanoOf(amount: string): number {
  const negative = amount.startsWith('-');
  const [whole, fraction = ''] = amount.replace('-', '').split('.');
  const nano = Number(whole) * 1_000_000_000 + Number(fraction.padEnd(9, '0').slice(0, 9));
  return negative ? -nano : nano;
}

/** Integer nano-dollars as a short USD label for a chart axis. */
export function usdOfNano(nano: number): string {
  const digits = String(Math.round(Math.abs(nano))).padStart(10, '0');
  return usd(`${nano < 0 ? '-' : ''}${digits.slice(0, -9)}.${digits.slice(-9)}`);
}

export function shortAddress(address: string): string {
  return `${address.slice(0, 6)}…${address.slice(-4)}`;
}

export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return `${date.toISOString().slice(0, 10)} ${date.toISOString().slice(11, 19)} UTC`;
}
