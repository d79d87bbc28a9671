import { formatUsd } from '../lib/money.ts';
import type { ApiKeyRecord, UsageSeriesRow } from './records.ts';
import type { Store } from './store.ts';
import type { UsageSqlRow } from './rows/ledger-rows.ts';

/** The Store methods behind the console that each backend implements in its own module. */
export type ConsoleMethods = Pick<
  Store,
  | 'updateKeyLimits'
  | 'searchReceipts'
  | 'spendSeries'
  | 'usageBy'
  | 'usageSeries'
  | 'listFunds'
  | 'claimMembership'
  | 'listMembers'
  | 'addMember'
  | 'removeMember'
  | 'insertSession'
  | 'findSession'
  | 'endSession'
  | 'endSessionsOf'
  | 'insertSignInNonce'
  | 'consumeSignInNonce'
  | 'listAliasRules'
  | 'setAliasRule'
  | 'listAudit'
>;

// What the console's writes put in the audit log, the same on every backend. Money appears as
// a USD string, as in `funds.added` and `budget.set`.

/** Detail of `key.created`. */
export function keyCreatedDetail(key: ApiKeyRecord): Record<string, unknown> {
  return { keyId: key.id, prefix: key.prefix, name: key.name, scopes: key.scopes, models: key.models };
}

/** The audited settings of a key, as the audit log shows them. */
function keySettings(key: ApiKeyRecord) {
  return {
    name: key.name,
    models: key.models,
    dailyLimit: key.dailyLimitNano === null ? null : formatUsd(key.dailyLimitNano),
    rateLimitPerMinute: key.rateLimitPerMinute,
  };
}

/**
 * The audit entry of a key's change: `key.limits` (the limits it has now) when only limits
 * changed, else `key.updated` (name and models too); `before` holds each changed setting's old value.
 */
export function keyChangeAudit(previous: ApiKeyRecord, updated: ApiKeyRecord): { action: string; detail: Record<string, unknown> } {
  const old = keySettings(previous);
  const now = keySettings(updated);
  const changed = (Object.keys(now) as Array<keyof typeof now>).filter((field) => JSON.stringify(old[field]) !== JSON.stringify(now[field]));
  const before = Object.fromEntries(changed.map((field) => [field, old[field]]));
  const limitsOnly = changed.every((field) => field === 'dailyLimit' || field === 'rateLimitPerMinute');
  const { dailyLimit, rateLimitPerMinute } = now;
  return limitsOnly
    ? { action: 'key.limits', detail: { keyId: updated.id, prefix: updated.prefix, dailyLimit, rateLimitPerMinute, before } }
    : { action: 'key.updated', detail: { keyId: updated.id, prefix: updated.prefix, ...now, before } };
}

/** Detail of `rules.set`. */
export function aliasRuleDetail(rule: { alias: string; candidates: string[]; reasoning: string }): Record<string, unknown> {
  return { alias: rule.alias, candidates: rule.candidates, reasoning: rule.reasoning };
}

export interface KeyLimitChanges {
  name?: string;
  models?: string[] | null;
  dailyLimitNano?: number | null;
  rateLimitPerMinute?: number | null;
}

/** Refuses a limit the schema's CHECKs would refuse, with a message that names it. */
export function assertKeyLimits(changes: KeyLimitChanges): void {
  const { dailyLimitNano, rateLimitPerMinute, name, models } = changes;
  if (name !== undefined && !name.trim()) throw new RangeError('a key needs a name');
  if (models !== undefined && models !== null && !models.length) throw new RangeError('models: null allows every model; an empty list allows none');
  if (dailyLimitNano != null && (!Number.isSafeInteger(dailyLimitNano) || dailyLimitNano < 0)) {
    throw new RangeError(`a daily limit must be a whole number of nano-USD, got ${dailyLimitNano}`);
  }
  if (rateLimitPerMinute != null && (!Number.isSafeInteger(rateLimitPerMinute) || rateLimitPerMinute < 1)) {
    throw new RangeError(`a rate limit must be a positive whole number of requests per minute, got ${rateLimitPerMinute}`);
  }
}

/** The key with the changes applied: an absent field is left as it is, null removes the limit. */
export function withKeyLimits(key: ApiKeyRecord, changes: KeyLimitChanges): ApiKeyRecord {
  return {
    ...key,
    name: changes.name === undefined ? key.name : changes.name,
    models: changes.models === undefined ? key.models : changes.models,
    dailyLimitNano: changes.dailyLimitNano === undefined ? key.dailyLimitNano : changes.dailyLimitNano,
    rateLimitPerMinute: changes.rateLimitPerMinute === undefined ? key.rateLimitPerMinute : changes.rateLimitPerMinute,
  };
}

/** Usage rows of receipts with neither a requested nor an answering model are named this. */
export const UNKNOWN_MODEL = '(unknown)';

/** A usage-series row as both backends' receipt query returns it; attempts come as [start, name, failed]. */
export interface UsageSeriesSqlRow extends UsageSqlRow {
  start: string | Date;
}

export interface FailedAttemptsSqlRow {
  start: string | Date;
  name: string;
  failed: number;
}

const isoOf = (start: string | Date) => (typeof start === 'string' ? start : start.toISOString());

/** The receipts' figures and the failed attempts of each (bucket, name), merged; a name with only failed attempts gets a row of its own. */
export function mergeUsageSeries(receipts: UsageSeriesSqlRow[], failures: FailedAttemptsSqlRow[]): UsageSeriesRow[] {
  const rows = new Map<string, UsageSeriesRow>();
  for (const row of receipts) {
    const start = isoOf(row.start);
    rows.set(`${start} ${row.name}`, {
      start,
      name: row.name,
      requests: Number(row.requests),
      errors: Number(row.errors),
      inputTokens: Number(row.input_tokens),
      outputTokens: Number(row.output_tokens),
      costNano: Number(row.cost_nano),
      failedAttempts: 0,
    });
  }
  for (const failure of failures) {
    const start = isoOf(failure.start);
    const key = `${start} ${failure.name}`;
    const row = rows.get(key) ?? {
      start,
      name: failure.name,
      requests: 0,
      errors: 0,
      inputTokens: 0,
      outputTokens: 0,
      costNano: 0,
      failedAttempts: 0,
    };
    row.failedAttempts += Number(failure.failed);
    rows.set(key, row);
  }
  return [...rows.values()].sort((a, b) => (a.start === b.start ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.start < b.start ? -1 : 1));
}

/** Refuses a page size that is not a positive integer. */
export function assertPageLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
}

/** True when `now` is before the instant `expiresAt` (both ISO strings). */
export function isBefore(now: string, expiresAt: string): boolean {
  return Date.parse(now) < Date.parse(expiresAt);
}

/**
 * A backend's console methods behind the checks every backend makes before it reads or writes:
 * a key's new limits (assertKeyLimits) and a page's size (assertPageLimit).
 */
export function checkedConsole(methods: ConsoleMethods): ConsoleMethods {
  return {
    ...methods,
    async updateKeyLimits(accountId, keyId, changes, actor, at) {
      assertKeyLimits(changes);
      return methods.updateKeyLimits(accountId, keyId, changes, actor, at);
    },
    async searchReceipts(accountId, page) {
      assertPageLimit(page.limit);
      return methods.searchReceipts(accountId, page);
    },
    async listFunds(accountId, page) {
      assertPageLimit(page.limit);
      return methods.listFunds(accountId, page);
    },
    async listAudit(accountId, limit, beforeId, filter) {
      assertPageLimit(limit);
      return methods.listAudit(accountId, limit, beforeId, filter);
    },
  };
}
