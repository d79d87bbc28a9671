import type { Database, Statement } from 'better-sqlite3';
import type { ReceiptCursor, ReceiptFilter } from '../records.ts';
import { instantNanos } from '../receipt-order.ts';
import { receiptColumns } from './statements.ts';
import type { FundsRow, MemberRow, SessionRow, SignInNonceRow, SpendRow, UsageSqlRow } from '../row-mapping.ts';
import type { SqliteAliasRuleRow, SqliteApiKeyRow, SqliteAuditRow, SqliteReceiptRow } from './sqlite-rows.ts';

const keyColumns =
  'id, account_id, name, prefix, hash, scopes, models, daily_limit_nano, rate_limit_per_minute, expires_at, revoked_at, created_at, last_used_at';
const memberColumns = 'account_id, address, role, added_at, added_by';
const sessionColumns = 'id, token_hash, account_id, address, created_at, expires_at, ended_at';
const aliasRuleColumns = 'account_id, alias, candidates, reasoning, updated_at, updated_by';

/** Receipts with created_ns in [from, to). */
type Range = { accountId: string; from: bigint; to: bigint };

/** Usage per group `name`: tokens come from the receipt's usage JSON, absent usage counts 0. */
function usageSql(name: string): string {
  return `SELECT ${name} AS name, count(*) AS requests, sum(status = 'failed') AS errors,
            coalesce(sum(json_extract(usage, '$.inputTokens')), 0) AS input_tokens,
            coalesce(sum(json_extract(usage, '$.outputTokens')), 0) AS output_tokens,
            sum(cost_nano) AS cost_nano
          FROM receipts WHERE account_id = @accountId AND created_ns >= @from AND created_ns < @to
          GROUP BY 1 ORDER BY requests DESC, name`;
}

/** Statements of the console's reads and writes, prepared once after migrations ran. */
export function prepareConsoleStatements(db: Database) {
  return {
    ensureAccount: db.prepare<[id: string, createdAt: string]>('INSERT OR IGNORE INTO accounts (id, balance_nano, created_at) VALUES (?, 0, ?)'),
    insertAudit: db.prepare<[accountId: string, at: string, actor: string, action: string, detail: string]>(
      'INSERT INTO audit_log (account_id, at, actor, action, detail) VALUES (?, ?, ?, ?, ?)',
    ),
    auditBefore: db.prepare<[accountId: string, beforeId: number, limit: number], SqliteAuditRow>(
      'SELECT id, account_id, at, actor, action, detail FROM audit_log WHERE account_id = ? AND id < ? ORDER BY id DESC LIMIT ?',
    ),

    auditFiltered: db.prepare<
      [{ accountId: string; beforeId: number | null; actor: string | null; action: string | null; limit: number }],
      SqliteAuditRow
    >(
      `SELECT id, account_id, at, actor, action, detail FROM audit_log
       WHERE account_id = @accountId AND (@beforeId IS NULL OR id < @beforeId) AND (@actor IS NULL OR lower(actor) = lower(@actor))
         AND (@action IS NULL OR action = @action OR substr(action, 1, length(@action) + 1) = @action || '.')
       ORDER BY id DESC LIMIT @limit`,
    ),

    keyOfAccount: db.prepare<[accountId: string, id: string], SqliteApiKeyRow>(`SELECT ${keyColumns} FROM api_keys WHERE account_id = ? AND id = ?`),
    setKeyLimits: db.prepare<
      [{ id: string; name: string; models: string | null; dailyLimitNano: number | null; rateLimitPerMinute: number | null }],
      SqliteApiKeyRow
    >(
      `UPDATE api_keys SET name = @name, models = @models, daily_limit_nano = @dailyLimitNano, rate_limit_per_minute = @rateLimitPerMinute
       WHERE id = @id RETURNING ${keyColumns}`,
    ),

    // Bucket start from the ISO text itself: created_at is always UTC with a Z, so its first
    // 13 (hour) or 10 (day) characters name the bucket. The range goes by created_ns, in the
    // account's index: created_ns and created_at share their millisecond.
    spendSeries: db.prepare<[Range & { length: number; suffix: string }], SpendRow>(
      `SELECT substr(created_at, 1, @length) || @suffix AS start, sum(cost_nano) AS cost_nano,
              count(*) AS requests, sum(status = 'failed') AS errors
       FROM receipts WHERE account_id = @accountId AND created_ns >= @from AND created_ns < @to
       GROUP BY 1 ORDER BY 1`,
    ),
    usageByModel: db.prepare<[Range & { unknown: string }], UsageSqlRow>(usageSql('coalesce(answering_model, requested_model, @unknown)')),
    usageByKey: db.prepare<[Range], UsageSqlRow>(usageSql('key_id')),
    usageByDay: db.prepare<[Range], UsageSqlRow>(usageSql('substr(created_at, 1, 10)')),
    funds: db.prepare<[{ accountId: string; beforeId: number | null; limit: number }], FundsRow>(
      `SELECT id, at, amount_nano, note FROM ledger_entries
       WHERE account_id = @accountId AND kind = 'funds' AND (@beforeId IS NULL OR id < @beforeId)
       ORDER BY id DESC LIMIT @limit`,
    ),

    // No target: a conflict on the primary key (already a member) or on the one-owner index
    // (someone else owns it) both insert nothing.
    insertMember: db.prepare<[MemberRow], MemberRow>(
      `INSERT INTO members (${memberColumns}) VALUES (@account_id, @address, @role, @added_at, @added_by)
       ON CONFLICT DO NOTHING RETURNING ${memberColumns}`,
    ),
    member: db.prepare<[accountId: string, address: string], MemberRow>(`SELECT ${memberColumns} FROM members WHERE account_id = ? AND address = ?`),
    members: db.prepare<[accountId: string], MemberRow>(
      `SELECT ${memberColumns} FROM members WHERE account_id = ? ORDER BY role = 'owner' DESC, added_at, address`,
    ),
    deleteMember: db.prepare<[accountId: string, address: string], MemberRow>(
      `DELETE FROM members WHERE account_id = ? AND address = ? AND role = 'member' RETURNING ${memberColumns}`,
    ),

    insertSession: db.prepare<[SessionRow]>(
      `INSERT INTO sessions (${sessionColumns}) VALUES (@id, @token_hash, @account_id, @address, @created_at, @expires_at, @ended_at)`,
    ),
    session: db.prepare<[tokenHash: string], SessionRow>(`SELECT ${sessionColumns} FROM sessions WHERE token_hash = ?`),
    // An ended session keeps the instant it first ended.
    endSession: db.prepare<[at: string, tokenHash: string]>('UPDATE sessions SET ended_at = ? WHERE token_hash = ? AND ended_at IS NULL'),
    endSessionsOf: db.prepare<[at: string, accountId: string, address: string]>(
      'UPDATE sessions SET ended_at = ? WHERE account_id = ? AND address = ? AND ended_at IS NULL',
    ),

    insertNonce: db.prepare<[SignInNonceRow]>(
      'INSERT INTO sign_in_nonces (nonce, address, created_at, expires_at) VALUES (@nonce, @address, @created_at, @expires_at)',
    ),
    deleteExpiredNonces: db.prepare<[now: string]>('DELETE FROM sign_in_nonces WHERE expires_at <= ?'),
    // Deleted whether expired or not: an expired nonce is refused by the caller and never comes back.
    takeNonce: db.prepare<[nonce: string], SignInNonceRow>(
      'DELETE FROM sign_in_nonces WHERE nonce = ? RETURNING nonce, address, created_at, expires_at',
    ),

    aliasRules: db.prepare<[accountId: string], SqliteAliasRuleRow>(
      `SELECT ${aliasRuleColumns} FROM alias_rules WHERE account_id = ? ORDER BY alias`,
    ),
    upsertAliasRule: db.prepare<[SqliteAliasRuleRow]>(
      `INSERT INTO alias_rules (${aliasRuleColumns}) VALUES (@account_id, @alias, @candidates, @reasoning, @updated_at, @updated_by)
       ON CONFLICT (account_id, alias) DO UPDATE SET candidates = excluded.candidates, reasoning = excluded.reasoning,
         updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
    ),
  };
}

export type ConsoleStatements = ReturnType<typeof prepareConsoleStatements>;

type SearchParameter = string | number | bigint;

export interface ReceiptSearch {
  /** Names the statement's shape: one prepared statement per combination of filters used. */
  shape: string;
  text: string;
  parameters: Record<string, SearchParameter>;
}

/**
 * The receipt search as SQL with only the conditions in use, so each shape gets a plan that
 * can use an index (a key's receipts, the account's newest). Keyset pagination: strictly older
 * than the cursor by created_ns, unique per account and the order of the index.
 */
export function receiptSearch(accountId: string, limit: number, filter: ReceiptFilter, cursor: ReceiptCursor | undefined): ReceiptSearch {
  const conditions = ['account_id = @accountId'];
  const parameters: Record<string, SearchParameter> = { accountId, limit };
  const add = (name: string, value: SearchParameter | undefined, condition: string) => {
    if (value === undefined) return;
    conditions.push(condition);
    parameters[name] = value;
  };
  const nanos = (instant: string | undefined) => (instant === undefined ? undefined : instantNanos(instant));
  add('keyId', filter.keyId, 'key_id = @keyId');
  add('model', filter.model, '(requested_model = @model OR answering_model = @model)');
  add('requestedModel', filter.requestedModel, 'requested_model = @requestedModel');
  add('status', filter.status, 'status = @status');
  add('errorCode', filter.errorCode, 'error_code = @errorCode');
  add('endpoint', filter.endpoint, 'endpoint = @endpoint');
  add('from', nanos(filter.from), 'created_ns >= @from');
  add('to', nanos(filter.to), 'created_ns < @to');
  add('cursor', nanos(cursor?.createdAt), 'created_ns < @cursor');
  const text = `SELECT ${receiptColumns} FROM receipts WHERE ${conditions.join(' AND ')} ORDER BY created_ns DESC LIMIT @limit`;
  return { shape: conditions.join(' AND '), text, parameters };
}

export type ReceiptSearchStatement = Statement<[Record<string, SearchParameter>], SqliteReceiptRow>;

const seriesNames = {
  account: { receipt: "'account'", attempt: "'account'" },
  key: { receipt: 'key_id', attempt: 'r.key_id' },
  model: { receipt: 'coalesce(answering_model, requested_model, @unknown)', attempt: "json_extract(a.value, '$.model')" },
} as const;

/**
 * The two statements of a usage series: the receipts' figures per (bucket, group), and the
 * failed attempts per (bucket, group) read from each receipt's attempts JSON. Parameters:
 * accountId, from, to (created_ns), length and suffix (the bucket), unknown, keyId when narrowed.
 */
export function usageSeriesSql(by: keyof typeof seriesNames, narrowed: boolean): { receipts: string; attempts: string } {
  const key = narrowed ? ' AND key_id = @keyId' : '';
  const range = `account_id = @accountId AND created_ns >= @from AND created_ns < @to${key}`;
  return {
    receipts: `SELECT substr(created_at, 1, @length) || @suffix AS start, ${seriesNames[by].receipt} AS name,
                 count(*) AS requests, sum(status = 'failed') AS errors,
                 coalesce(sum(json_extract(usage, '$.inputTokens')), 0) AS input_tokens,
                 coalesce(sum(json_extract(usage, '$.outputTokens')), 0) AS output_tokens,
                 sum(cost_nano) AS cost_nano
               FROM receipts WHERE ${range} GROUP BY 1, 2`,
    attempts: `SELECT substr(r.created_at, 1, @length) || @suffix AS start, ${seriesNames[by].attempt} AS name, count(*) AS failed
               FROM receipts r, json_each(r.attempts) a
               WHERE ${range.replace(/\b(account_id|created_ns|key_id)\b/g, 'r.$1')}
                 AND json_extract(a.value, '$.outcome') = 'failed'
               GROUP BY 1, 2`,
  };
}
