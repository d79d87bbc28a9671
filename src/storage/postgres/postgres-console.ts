import type pg from 'pg';
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
import type { MemberRecord, MemberRole } from '../records.ts';
import { consoleStatements, usageSeriesStatements } from './console-statements.ts';
import type { PostgresDatabase } from './postgres-database.ts';
import {
  aliasRuleFromRow,
  type AliasRuleRow,
  apiKeyFromRow,
  type ApiKeyRow,
  auditFromRow,
  type AuditRow,
  fundsFromRow,
  type FundsRow,
  memberFromRow,
  type MemberRow,
  receiptFromRow,
  type ReceiptRow,
  sessionFromRow,
  type SessionRow,
  signInNonceFromRow,
  spendFromRow,
  type SpendRow,
  type SignInNonceRow,
  usageFromRow,
  type UsageSqlRow,
} from '../row-mapping.ts';
import { statements } from './statements.ts';

/**
 * The console's storage on PostgreSQL: key limits, receipt search and spend, members, sessions,
 * sign-in nonces, alias rules, the audit log. A write with an audit entry is one transaction;
 * the single-statement writes (sessions, nonces) are atomic on their own.
 */
export function createPostgresConsole(database: PostgresDatabase): ConsoleMethods {
  const audit = (client: pg.PoolClient, accountId: string, at: string, actor: string, action: string, detail: Record<string, unknown>) =>
    database.rows(statements.insertAudit(accountId, at, actor, action, detail), client);

  /** Inserts the member unless the address is one already or (for an owner) the account has one; returns the new row. */
  async function insertMember(client: pg.PoolClient, accountId: string, address: string, role: MemberRole, addedBy: string, at: string) {
    await database.rows(statements.ensureAccount(accountId, at), client);
    const row = await database.first<MemberRow>(consoleStatements.insertMember(accountId, address, role, at, addedBy), client);
    return row ? memberFromRow(row) : null;
  }

  async function member(accountId: string, address: string, client?: pg.PoolClient): Promise<MemberRecord | null> {
    const row = await database.first<MemberRow>(consoleStatements.member(accountId, address), client);
    return row ? memberFromRow(row) : null;
  }

  return checkedConsole({
    async updateKeyLimits(accountId, keyId, changes, actor, at) {
      return database.transaction(async (client) => {
        const row = await database.first<ApiKeyRow>(consoleStatements.keyOfAccountForUpdate(accountId, keyId), client);
        if (!row) return null;
        const previous = apiKeyFromRow(row);
        const wanted = withKeyLimits(previous, changes);
        const updated = apiKeyFromRow(
          (await database.first<ApiKeyRow>(
            consoleStatements.setKeyLimits(keyId, wanted.name, wanted.models, wanted.dailyLimitNano, wanted.rateLimitPerMinute),
            client,
          ))!,
        );
        const entry = keyChangeAudit(previous, updated);
        await audit(client, accountId, at, actor, entry.action, entry.detail);
        // Committed with the change: every process drops its cached copy of the key.
        await database.rows(statements.bumpKeyChanges(), client);
        return updated;
      });
    },

    async searchReceipts(accountId, { limit, cursor, filter = {} }) {
      // One row more than asked tells whether another page exists.
      const rows = await database.rows<ReceiptRow>(consoleStatements.searchReceipts(accountId, limit + 1, filter, cursor));
      return { data: rows.slice(0, limit).map(receiptFromRow), hasMore: rows.length > limit };
    },
    async spendSeries(accountId, { from, to, bucket }) {
      const rows = await database.rows<SpendRow>(consoleStatements.spendSeries(accountId, from, to, bucket));
      return rows.map(spendFromRow);
    },
    async usageBy(accountId, { from, to, by }) {
      const statement =
        by === 'model'
          ? consoleStatements.usageByModel(accountId, from, to, UNKNOWN_MODEL)
          : consoleStatements[by === 'key' ? 'usageByKey' : 'usageByDay'](accountId, from, to);
      return (await database.rows<UsageSqlRow>(statement)).map(usageFromRow);
    },
    async usageSeries(accountId, { from, to, bucket, by, keyId }) {
      const statements = usageSeriesStatements(accountId, from, to, bucket, by, UNKNOWN_MODEL, keyId);
      const [receipts, failures] = await Promise.all([
        database.rows<UsageSeriesSqlRow>(statements.receipts),
        database.rows<FailedAttemptsSqlRow>(statements.attempts),
      ]);
      return mergeUsageSeries(receipts, failures);
    },
    async listFunds(accountId, { limit, beforeId }) {
      return (await database.rows<FundsRow>(consoleStatements.funds(accountId, limit, beforeId ?? null))).map(fundsFromRow);
    },

    async claimMembership(accountId, address, at) {
      const lower = address.toLowerCase();
      return database.transaction(async (client) => {
        const owner = await insertMember(client, accountId, lower, 'owner', 'sign-in', at);
        if (owner) {
          await audit(client, accountId, at, lower, 'member.owner', { address: lower });
          return owner;
        }
        // The row that conflicted is committed (the insert waited for it): this statement sees it.
        return member(accountId, lower, client);
      });
    },
    async listMembers(accountId) {
      return (await database.rows<MemberRow>(consoleStatements.members(accountId))).map(memberFromRow);
    },
    async addMember(accountId, address, actor, at) {
      const lower = address.toLowerCase();
      return database.transaction(async (client) => {
        const added = await insertMember(client, accountId, lower, 'member', actor, at);
        if (added) {
          await audit(client, accountId, at, actor, 'member.added', { address: lower });
          return added;
        }
        return (await member(accountId, lower, client))!;
      });
    },
    async removeMember(accountId, address, actor, at) {
      const lower = address.toLowerCase();
      return database.transaction(async (client) => {
        if (!(await database.first<MemberRow>(consoleStatements.deleteMember(accountId, lower), client))) return false;
        const ended = await database.rows(consoleStatements.endSessionsOf(accountId, lower, at), client);
        await audit(client, accountId, at, actor, 'member.removed', { address: lower, sessionsEnded: ended.length });
        return true;
      });
    },

    async insertSession(session) {
      await database.rows(consoleStatements.insertSession(session));
    },
    async findSession(tokenHash) {
      const row = await database.first<SessionRow>(consoleStatements.session(tokenHash));
      return row ? sessionFromRow(row) : null;
    },
    async endSession(tokenHash, at) {
      await database.rows(consoleStatements.endSession(tokenHash, at));
    },
    async endSessionsOf(accountId, address, at) {
      return (await database.rows(consoleStatements.endSessionsOf(accountId, address.toLowerCase(), at))).length;
    },

    async insertSignInNonce(nonce) {
      await database.rows(consoleStatements.insertNonce(nonce));
    },
    async consumeSignInNonce(nonce, now) {
      const row = await database.first<SignInNonceRow>(consoleStatements.takeNonce(nonce));
      return row && isBefore(now, row.expires_at) ? signInNonceFromRow(row) : null;
    },

    async listAliasRules(accountId) {
      return (await database.rows<AliasRuleRow>(consoleStatements.aliasRules(accountId))).map(aliasRuleFromRow);
    },
    async setAliasRule(accountId, rule) {
      await database.transaction(async (client) => {
        await database.rows(statements.ensureAccount(accountId, rule.updatedAt), client);
        await database.rows(consoleStatements.upsertAliasRule(accountId, rule), client);
        await audit(client, accountId, rule.updatedAt, rule.updatedBy, 'rules.set', aliasRuleDetail(rule));
      });
    },

    async listAudit(accountId, limit, beforeId, filter) {
      if (filter?.actor !== undefined || filter?.action !== undefined) {
        const statement = consoleStatements.auditFiltered(accountId, limit, beforeId ?? null, filter.actor ?? null, filter.action ?? null);
        return (await database.rows<AuditRow>(statement)).map(auditFromRow);
      }
      const statement = beforeId === undefined ? statements.newestAudit(accountId, limit) : consoleStatements.auditBefore(accountId, beforeId, limit);
      return (await database.rows<AuditRow>(statement)).map(auditFromRow);
    },
  });
}
