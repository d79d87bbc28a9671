import type { Database } from 'better-sqlite3';
import {
  aliasRuleDetail,
  checkedConsole,
  type ConsoleMethods,
  type FailedAttemptsSqlRow,
  isBefore,
  keyChangeAudit,
  mergeUsageSeries,
  UNKNOWN_MODEL,
  type UsageSeriesSqlRow,
  withKeyLimits,
} from '../console-storage.ts';
import type { AliasRule, ApiKeyRecord, AuditEntry, MemberRecord, MemberRole } from '../records.ts';
import {
  fundsFromRow,
  memberFromRow,
  sessionFromRow,
  sessionToRow,
  signInNonceFromRow,
  signInNonceToRow,
  spendFromRow,
  usageFromRow,
} from '../row-mapping.ts';
import { instantNanos } from '../receipt-order.ts';
import type { Store } from '../store.ts';
import {
  prepareConsoleStatements,
  receiptSearch,
  usageSeriesSql,
  type ConsoleStatements,
  type ReceiptSearchStatement,
} from './console-statements.ts';
import type { Statement } from 'better-sqlite3';
import { aliasRuleFromSqlite, aliasRuleToSqlite, apiKeyFromSqlite, auditFromSqlite, receiptFromSqlite } from './sqlite-rows.ts';

const BUCKETS = { hour: { length: 13, suffix: ':00:00.000Z' }, day: { length: 10, suffix: 'T00:00:00.000Z' } } as const;

/**
 * The console's storage on SQLite: key limits, receipt search and spend, members, sessions,
 * sign-in nonces, alias rules, the audit log. Every write with an audit entry is one IMMEDIATE
 * transaction; SQLite's single writer makes each read-then-write atomic.
 * `newestAudit` is the store's own first page of the audit log.
 */
export function createSqliteConsole(db: Database, newestAudit: (accountId: string, limit: number) => AuditEntry[]): ConsoleMethods {
  let prepared: ConsoleStatements | undefined;
  const sql = () => (prepared ??= prepareConsoleStatements(db));
  const searches = new Map<string, ReceiptSearchStatement>();
  const seriesStatements = new Map<string, { receipts: Statement; attempts: Statement }>();
  const seriesOf = (by: 'account' | 'key' | 'model', narrowed: boolean) => {
    const shape = `${by}:${narrowed}`;
    let statements = seriesStatements.get(shape);
    if (!statements) {
      const text = usageSeriesSql(by, narrowed);
      seriesStatements.set(shape, (statements = { receipts: db.prepare(text.receipts), attempts: db.prepare(text.attempts) }));
    }
    return statements;
  };
  const audit = (accountId: string, at: string, actor: string, action: string, detail: Record<string, unknown>) =>
    sql().insertAudit.run(accountId, at, actor, action, JSON.stringify(detail));

  const updateKeyLimits = db.transaction(
    (accountId: string, keyId: string, changes: Parameters<Store['updateKeyLimits']>[2], actor: string, at: string): ApiKeyRecord | null => {
      const row = sql().keyOfAccount.get(accountId, keyId);
      if (!row) return null;
      const previous = apiKeyFromSqlite(row);
      const wanted = withKeyLimits(previous, changes);
      const updated = apiKeyFromSqlite(
        sql().setKeyLimits.get({
          id: keyId,
          name: wanted.name,
          models: wanted.models === null ? null : JSON.stringify(wanted.models),
          dailyLimitNano: wanted.dailyLimitNano,
          rateLimitPerMinute: wanted.rateLimitPerMinute,
        })!,
      );
      const entry = keyChangeAudit(previous, updated);
      audit(accountId, at, actor, entry.action, entry.detail);
      return updated;
    },
  );

  /** Inserts the member unless the address is one already or (for an owner) the account has one; returns the new row. */
  function insertMember(accountId: string, address: string, role: MemberRole, addedBy: string, at: string): MemberRecord | null {
    sql().ensureAccount.run(accountId, at);
    const row = sql().insertMember.get({ account_id: accountId, address, role, added_at: at, added_by: addedBy });
    return row ? memberFromRow(row) : null;
  }

  const claimMembership = db.transaction((accountId: string, address: string, at: string): MemberRecord | null => {
    const owner = insertMember(accountId, address, 'owner', 'sign-in', at);
    if (owner) {
      audit(accountId, at, address, 'member.owner', { address });
      return owner;
    }
    const row = sql().member.get(accountId, address);
    return row ? memberFromRow(row) : null;
  });

  const addMember = db.transaction((accountId: string, address: string, actor: string, at: string): MemberRecord => {
    const added = insertMember(accountId, address, 'member', actor, at);
    if (added) {
      audit(accountId, at, actor, 'member.added', { address });
      return added;
    }
    return memberFromRow(sql().member.get(accountId, address)!);
  });

  const removeMember = db.transaction((accountId: string, address: string, actor: string, at: string): boolean => {
    if (!sql().deleteMember.get(accountId, address)) return false;
    const { changes } = sql().endSessionsOf.run(at, accountId, address);
    audit(accountId, at, actor, 'member.removed', { address, sessionsEnded: changes });
    return true;
  });

  const insertSignInNonce = db.transaction((row: ReturnType<typeof signInNonceToRow>) => {
    // Nonces never used would otherwise pile up; the table stays as small as the last minutes' sign-ins.
    sql().deleteExpiredNonces.run(row.created_at);
    sql().insertNonce.run(row);
  });

  const setAliasRule = db.transaction((accountId: string, rule: AliasRule) => {
    sql().ensureAccount.run(accountId, rule.updatedAt);
    sql().upsertAliasRule.run(aliasRuleToSqlite(accountId, rule));
    audit(accountId, rule.updatedAt, rule.updatedBy, 'rules.set', aliasRuleDetail(rule));
  });

  return checkedConsole({
    async updateKeyLimits(accountId, keyId, changes, actor, at) {
      return updateKeyLimits.immediate(accountId, keyId, changes, actor, at);
    },

    async searchReceipts(accountId, { limit, cursor, filter = {} }) {
      // One row more than asked tells whether another page exists.
      const search = receiptSearch(accountId, limit + 1, filter, cursor);
      let statement = searches.get(search.shape);
      if (!statement) searches.set(search.shape, (statement = db.prepare(search.text) as ReceiptSearchStatement));
      const rows = statement.all(search.parameters);
      return { data: rows.slice(0, limit).map(receiptFromSqlite), hasMore: rows.length > limit };
    },
    async spendSeries(accountId, { from, to, bucket }) {
      const rows = sql().spendSeries.all({ accountId, from: instantNanos(from), to: instantNanos(to), ...BUCKETS[bucket] });
      return rows.map(spendFromRow);
    },
    async usageBy(accountId, { from, to, by }) {
      const range = { accountId, from: instantNanos(from), to: instantNanos(to) };
      const rows =
        by === 'model' ? sql().usageByModel.all({ ...range, unknown: UNKNOWN_MODEL }) : sql()[by === 'key' ? 'usageByKey' : 'usageByDay'].all(range);
      return rows.map(usageFromRow);
    },
    async usageSeries(accountId, { from, to, bucket, by, keyId }) {
      const statements = seriesOf(by, keyId !== undefined);
      const parameters = {
        accountId,
        from: instantNanos(from),
        to: instantNanos(to),
        ...BUCKETS[bucket],
        unknown: UNKNOWN_MODEL,
        ...(keyId === undefined ? {} : { keyId }),
      };
      return mergeUsageSeries(
        statements.receipts.all(parameters) as UsageSeriesSqlRow[],
        statements.attempts.all(parameters) as FailedAttemptsSqlRow[],
      );
    },
    async listFunds(accountId, { limit, beforeId }) {
      return sql()
        .funds.all({ accountId, beforeId: beforeId ?? null, limit })
        .map(fundsFromRow);
    },

    async claimMembership(accountId, address, at) {
      return claimMembership.immediate(accountId, address.toLowerCase(), at);
    },
    async listMembers(accountId) {
      return sql().members.all(accountId).map(memberFromRow);
    },
    async addMember(accountId, address, actor, at) {
      return addMember.immediate(accountId, address.toLowerCase(), actor, at);
    },
    async removeMember(accountId, address, actor, at) {
      return removeMember.immediate(accountId, address.toLowerCase(), actor, at);
    },

    async insertSession(session) {
      sql().insertSession.run(sessionToRow(session));
    },
    async findSession(tokenHash) {
      const row = sql().session.get(tokenHash);
      return row ? sessionFromRow(row) : null;
    },
    async endSession(tokenHash, at) {
      sql().endSession.run(at, tokenHash);
    },
    async endSessionsOf(accountId, address, at) {
      return sql().endSessionsOf.run(at, accountId, address.toLowerCase()).changes;
    },

    async insertSignInNonce(nonce) {
      insertSignInNonce.immediate(signInNonceToRow(nonce));
    },
    async consumeSignInNonce(nonce, now) {
      const row = sql().takeNonce.get(nonce);
      return row && isBefore(now, row.expires_at) ? signInNonceFromRow(row) : null;
    },

    async listAliasRules(accountId) {
      return sql().aliasRules.all(accountId).map(aliasRuleFromSqlite);
    },
    async setAliasRule(accountId, rule) {
      setAliasRule.immediate(accountId, rule);
    },

    async listAudit(accountId, limit, beforeId, filter) {
      if (filter?.actor !== undefined || filter?.action !== undefined) {
        const { actor = null, action = null } = filter;
        return sql()
          .auditFiltered.all({ accountId, beforeId: beforeId ?? null, actor, action, limit })
          .map(auditFromSqlite);
      }
      return beforeId === undefined ? newestAudit(accountId, limit) : sql().auditBefore.all(accountId, beforeId, limit).map(auditFromSqlite);
    },
  });
}
