import { formatUsd } from '../lib/money.ts';
import type { ApiKeyRecord } from './records.ts';
import type { Store } from './store.ts';

/** The Store methods behind the console that each backend implements in its own module. */
export type ConsoleMethods = Pick<
  Store,
  | 'updateKeyLimits'
  | 'searchReceipts'
  | 'spendSeries'
  | 'usageBy'
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

/** Detail of `key.limits`: the limits the key has now. */
export function keyLimitsDetail(key: ApiKeyRecord): Record<string, unknown> {
  return {
    keyId: key.id,
    prefix: key.prefix,
    dailyLimit: key.dailyLimitNano === null ? null : formatUsd(key.dailyLimitNano),
    rateLimitPerMinute: key.rateLimitPerMinute,
  };
}

/** Detail of `rules.set`. */
export function aliasRuleDetail(rule: { alias: string; candidates: string[]; reasoning: string }): Record<string, unknown> {
  return { alias: rule.alias, candidates: rule.candidates, reasoning: rule.reasoning };
}

export interface KeyLimitChanges {
  dailyLimitNano?: number | null;
  rateLimitPerMinute?: number | null;
}

/** Refuses a limit the schema's CHECKs would refuse, with a message that names it. */
export function assertKeyLimits(changes: KeyLimitChanges): void {
  const { dailyLimitNano, rateLimitPerMinute } = changes;
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
    dailyLimitNano: changes.dailyLimitNano === undefined ? key.dailyLimitNano : changes.dailyLimitNano,
    rateLimitPerMinute: changes.rateLimitPerMinute === undefined ? key.rateLimitPerMinute : changes.rateLimitPerMinute,
  };
}

/** Usage rows of receipts with neither a requested nor an answering model are named this. */
export const UNKNOWN_MODEL = '(unknown)';

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
    async listAudit(accountId, limit, beforeId) {
      assertPageLimit(limit);
      return methods.listAudit(accountId, limit, beforeId);
    },
  };
}
