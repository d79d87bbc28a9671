import { nearestName } from '../lib/nearest-name.ts';
import type { ApiKeyRecord, ReceiptStatus } from '../storage/records.ts';
import { DEFAULT_ACCOUNT_ID } from '../storage/store.ts';
import { CliError } from './cli-error.ts';
import type { CommandContext } from './command-context.ts';

const DURATION_UNITS_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const STATUSES: readonly ReceiptStatus[] = ['succeeded', 'failed', 'cancelled'];

/** " (did you mean x?)" when `given` is near one of `names`, else nothing. */
export function didYouMean(given: string, names: Iterable<string>, prefix = ''): string {
  const nearest = nearestName(given, names);
  return nearest === undefined ? '' : ` (did you mean ${prefix}${nearest}?)`;
}

/**
 * `--since` / `--until`: an ISO date (UTC midnight), an ISO instant (UTC unless it has an
 * offset) or a duration before now (90m, 12h, 30d, 2w); as an ISO instant.
 */
export function parseWhen(option: string, text: string | undefined, now: Date): string | undefined {
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  const duration = /^(\d+)([mhdw])$/.exec(trimmed);
  let at = Number.NaN;
  if (duration) at = now.getTime() - Number(duration[1]) * DURATION_UNITS_MS[duration[2]!]!;
  else if (/^\d{4}-\d{2}-\d{2}$/.test(trimmed)) at = Date.parse(`${trimmed}T00:00:00Z`);
  else if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$/i.test(trimmed)) {
    const iso = trimmed.replace(' ', 'T');
    at = Date.parse(/(Z|[+-]\d{2}:\d{2})$/i.test(iso) ? iso : `${iso}Z`);
  }
  if (!Number.isFinite(at)) {
    throw new CliError(`--${option} must be a date (2026-01-31), a UTC time (2026-01-31T18:00) or a duration ago (90m, 12h, 30d, 2w); got "${text}"`);
  }
  return new Date(at).toISOString();
}

/** A whole number from `least` to `most`. */
export function parseCount(option: string, text: string | undefined, fallback: number, least: number, most: number): number {
  if (text === undefined) return fallback;
  const value = Number(text.trim());
  if (!/^\d+$/.test(text.trim()) || value < least || value > most) {
    throw new CliError(`--${option} must be a whole number from ${least} to ${most}; got "${text}"`);
  }
  return value;
}

export function parseStatus(text: string | undefined): ReceiptStatus | undefined {
  if (text === undefined) return undefined;
  if (STATUSES.includes(text as ReceiptStatus)) return text as ReceiptStatus;
  throw new CliError(`unknown status "${text}"${didYouMean(text, STATUSES)}; statuses are: ${STATUSES.join(', ')}`);
}

/** The key named by `--key`: its id (key_...) or display prefix (svc_...). */
export async function findKey(context: CommandContext, text: string): Promise<ApiKeyRecord> {
  const keys = await context.store.listKeys(DEFAULT_ACCOUNT_ID);
  const key = keys.find((candidate) => candidate.id === text || candidate.prefix === text);
  if (key) return key;
  const names = keys.flatMap((candidate) => [candidate.id, candidate.prefix]);
  throw new CliError(`no key matches "${text}" (see: gateway keys list)${didYouMean(text, names)}`);
}

/** Output as a table (default), --json or --csv; never both of the last two. */
export function outputFormat(context: CommandContext): 'table' | 'json' | 'csv' {
  if (context.options.json && context.options.csv) throw new CliError('choose one of --json and --csv', 2);
  return context.options.json ? 'json' : context.options.csv ? 'csv' : 'table';
}
