import type { GatewayConfig } from '../config/schema.ts';
import { parseUsd } from '../lib/money.ts';
import { didYouMean } from './report-options.ts';
import type { Scope } from '../storage/records.ts';
import { CliError } from './cli-error.ts';

const SCOPES: readonly Scope[] = ['inference', 'fix'];
const DURATION_UNITS_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

function splitList(text: string): string[] {
  return [
    ...new Set(
      text
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean),
    ),
  ];
}

export function parseScopes(text: string | undefined): Scope[] {
  if (text === undefined) return ['inference'];
  const scopes = splitList(text);
  if (!scopes.length) throw new CliError('--scopes needs at least one of: inference, fix');
  for (const scope of scopes) {
    if (!SCOPES.includes(scope as Scope)) {
      throw new CliError(`unknown scope "${scope}"${didYouMean(scope, SCOPES)}; scopes are: ${SCOPES.join(', ')}`);
    }
  }
  return scopes as Scope[];
}

/** Null means every model; otherwise each entry must be an alias or a model id of this config. */
export function parseModels(text: string | undefined, config: GatewayConfig): string[] | null {
  if (text === undefined) return null;
  const models = splitList(text);
  if (!models.length) throw new CliError('--models needs at least one alias or model id (leave it out to allow every model)');
  const known = [...Object.keys(config.aliases), ...config.models.map((model) => model.id), ...config.wildcards.map((wildcard) => wildcard.id)];
  for (const model of models) {
    if (!known.includes(model)) {
      throw new CliError(`unknown model "${model}"${didYouMean(model, known)}; choose from: ${known.join(', ')}`);
    }
  }
  return models;
}

export function parseDailyLimit(text: string | undefined): number | null {
  if (text === undefined) return null;
  let nano: number;
  try {
    nano = parseUsd(text);
  } catch (error) {
    throw new CliError(`--daily-limit: ${(error as Error).message}`);
  }
  if (nano <= 0) throw new CliError('--daily-limit must be more than 0');
  return nano;
}

export function parseRateLimit(text: string | undefined): number | null {
  if (text === undefined) return null;
  const value = Number(text.trim());
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < 1) {
    throw new CliError(`--rate-limit must be a whole number of requests per minute, at least 1; got "${text}"`);
  }
  return value;
}

/** An ISO date or instant, or a duration from now (90m, 12h, 30d, 2w); must lie in the future. */
export function parseExpiry(text: string | undefined, now: Date): string | null {
  if (text === undefined) return null;
  const trimmed = text.trim();
  const duration = /^(\d+)([mhdw])$/.exec(trimmed);
  let at: number;
  if (duration) {
    at = now.getTime() + Number(duration[1]) * DURATION_UNITS_MS[duration[2]!]!;
  } else if (/^\d{4}-\d{2}-\d{2}([T ].*)?$/.test(trimmed) && !Number.isNaN(Date.parse(trimmed))) {
    at = Date.parse(trimmed);
  } else {
    throw new CliError(`--expires must be an ISO date (2026-12-31 or 2026-12-31T18:00:00Z) or a duration like 90m, 12h, 30d, 2w; got "${text}"`);
  }
  if (!Number.isFinite(at) || at <= now.getTime()) throw new CliError(`--expires "${text}" is not in the future`);
  return new Date(at).toISOString();
}
