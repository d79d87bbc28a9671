import type { QueryConfig } from 'pg';
import { instantNanos } from '../receipt-order.ts';
import { receiptColumns } from './statements.ts';
import type { AliasRule, MemberRole, ReceiptCursor, ReceiptFilter, SessionRecord, SignInNonceRecord } from '../records.ts';

/** The console's statements on PostgreSQL; named like those of statements.ts (`gateway_` + unique name per text). */
type Statement = QueryConfig<unknown[]>;

const keyColumns =
  'id, account_id, name, prefix, hash, scopes, models, daily_limit_nano, rate_limit_per_minute, expires_at, revoked_at, created_at, last_used_at';
const memberColumns = 'account_id, address, role, added_at, added_by';
const sessionColumns = 'id, token_hash, account_id, address, created_at, expires_at, ended_at';

function named(name: string, text: string, values: unknown[]): Statement {
  return { name: `gateway_${name}`, text, values };
}

/** An ISO instant as a created_ns bound (text: a bigint parameter beyond a safe JS integer). */
const nanos = (instant: string) => instantNanos(instant).toString();

/**
 * Usage per group `name` with created_ns in [$2, $3): tokens from the receipt's usage JSON, absent usage counts 0.
 * sum() of BIGINT is numeric: back to BIGINT.
 */
function usageText(name: string): string {
  return `SELECT ${name} AS name, count(*) AS requests, count(*) FILTER (WHERE status = 'failed') AS errors,
            coalesce(sum((usage->>'inputTokens')::numeric), 0)::bigint AS input_tokens,
            coalesce(sum((usage->>'outputTokens')::numeric), 0)::bigint AS output_tokens,
            sum(cost_nano)::bigint AS cost_nano
          FROM receipts WHERE account_id = $1 AND created_ns >= $2::bigint AND created_ns < $3::bigint
          GROUP BY 1 ORDER BY requests DESC, name`;
}

/** Filters and how each becomes a condition and a parameter; time bounds go by created_ns, in the account's index. */
const searchFields = [
  ['keyId', 'key_id = $', String],
  ['model', '(requested_model = $ OR answering_model = $)', String],
  ['status', 'status = $', String],
  ['endpoint', 'endpoint = $', String],
  ['from', 'created_ns >= $::bigint', nanos],
  ['to', 'created_ns < $::bigint', nanos],
  ['requestedModel', 'requested_model = $', String],
  ['errorCode', 'error_code = $', String],
] as const;

const seriesNames = {
  account: { receipt: "'account'", attempt: "'account'" },
  key: { receipt: 'key_id', attempt: 'r.key_id' },
  model: { receipt: 'coalesce(answering_model, requested_model, $5)', attempt: "a->>'model'" },
} as const;

/**
 * A usage series' two statements ($1 account, $2 from, $3 to, $4 'hour' or 'day', $5 unknown
 * model name, $6 key id when narrowed): the receipts' figures, and the failed attempts read from
 * each receipt's attempts, per (bucket, group).
 */
export function usageSeriesStatements(
  accountId: string,
  from: string,
  to: string,
  bucket: 'hour' | 'day',
  by: keyof typeof seriesNames,
  unknown: string,
  keyId?: string,
) {
  const values: unknown[] = [accountId, nanos(from), nanos(to), bucket, unknown];
  if (keyId !== undefined) values.push(keyId);
  const shape = `${by}${keyId === undefined ? '' : '_key'}`;
  const where = (alias: string) =>
    `${alias}account_id = $1 AND ${alias}created_ns >= $2::bigint AND ${alias}created_ns < $3::bigint${keyId === undefined ? '' : ` AND ${alias}key_id = $6`}`;
  const start = (alias: string) => `date_trunc($4, ${alias}created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`;
  return {
    receipts: named(
      `usage_series_${shape}`,
      `SELECT ${start('')} AS start, ${seriesNames[by].receipt} AS name, count(*) AS requests,
              count(*) FILTER (WHERE status = 'failed') AS errors,
              coalesce(sum((usage->>'inputTokens')::numeric), 0)::bigint AS input_tokens,
              coalesce(sum((usage->>'outputTokens')::numeric), 0)::bigint AS output_tokens,
              sum(cost_nano)::bigint AS cost_nano
       FROM receipts WHERE ${where('')} AND $5::text IS NOT NULL GROUP BY 1, 2`,
      values,
    ),
    attempts: named(
      `usage_series_attempts_${shape}`,
      `SELECT ${start('r.')} AS start, ${seriesNames[by].attempt} AS name, count(*) AS failed
       FROM receipts r CROSS JOIN LATERAL jsonb_array_elements(r.attempts) a
       WHERE ${where('r.')} AND a->>'outcome' = 'failed' AND $5::text IS NOT NULL GROUP BY 1, 2`,
      values,
    ),
  };
}

export const consoleStatements = {
  keyOfAccountForUpdate: (accountId: string, id: string) =>
    named('key_of_account_for_update', `SELECT ${keyColumns} FROM api_keys WHERE account_id = $1 AND id = $2 FOR NO KEY UPDATE`, [accountId, id]),
  setKeyLimits: (id: string, name: string, models: string[] | null, dailyLimitNano: number | null, rateLimitPerMinute: number | null) =>
    named(
      'set_key_settings',
      `UPDATE api_keys SET name = $2, models = $3, daily_limit_nano = $4, rate_limit_per_minute = $5 WHERE id = $1 RETURNING ${keyColumns}`,
      [id, name, models, dailyLimitNano, rateLimitPerMinute],
    ),

  /**
   * The receipt search with only the conditions in use (one named statement per combination,
   * so each gets a plan that can use an index). Keyset pagination: strictly older than the
   * cursor by created_ns, unique per account and the order of the index.
   */
  searchReceipts: (accountId: string, limit: number, filter: ReceiptFilter, cursor: ReceiptCursor | undefined): Statement => {
    const conditions = ['account_id = $1'];
    const values: unknown[] = [accountId];
    let shape = 0;
    searchFields.forEach(([field, condition, parameter], index) => {
      const value = filter[field];
      if (value === undefined) return;
      values.push(parameter(value));
      conditions.push(condition.replaceAll('$', `$${values.length}`));
      shape |= 1 << index;
    });
    if (cursor) {
      values.push(nanos(cursor.createdAt));
      conditions.push(`created_ns < $${values.length}::bigint`);
      shape |= 1 << searchFields.length;
    }
    values.push(limit);
    const text = `SELECT ${receiptColumns} FROM receipts WHERE ${conditions.join(' AND ')} ORDER BY created_ns DESC LIMIT $${values.length}`;
    return named(`search_receipts_${shape}`, text, values);
  },
  spendSeries: (accountId: string, from: string, to: string, bucket: 'hour' | 'day') =>
    named(
      'spend_series',
      `SELECT date_trunc($4, created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS start, sum(cost_nano)::bigint AS cost_nano,
              count(*) AS requests, count(*) FILTER (WHERE status = 'failed') AS errors
       FROM receipts WHERE account_id = $1 AND created_ns >= $2::bigint AND created_ns < $3::bigint
       GROUP BY 1 ORDER BY 1`,
      [accountId, nanos(from), nanos(to), bucket],
    ),
  usageByModel: (accountId: string, from: string, to: string, unknown: string) =>
    named('usage_by_model', usageText('coalesce(answering_model, requested_model, $4)'), [accountId, nanos(from), nanos(to), unknown]),
  usageByKey: (accountId: string, from: string, to: string) => named('usage_by_key', usageText('key_id'), [accountId, nanos(from), nanos(to)]),
  usageByDay: (accountId: string, from: string, to: string) =>
    named('usage_by_day', usageText(`to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`), [accountId, nanos(from), nanos(to)]),
  funds: (accountId: string, limit: number, beforeId: number | null) =>
    named(
      'funds',
      `SELECT id, at, amount_nano, note FROM ledger_entries
       WHERE account_id = $1 AND kind = 'funds' AND ($3::bigint IS NULL OR id < $3)
       ORDER BY id DESC LIMIT $2`,
      [accountId, limit, beforeId],
    ),

  // No target: a conflict on the primary key (already a member) or on the one-owner index
  // (someone else owns it) both insert nothing.
  insertMember: (accountId: string, address: string, role: MemberRole, at: string, addedBy: string) =>
    named('insert_member', `INSERT INTO members (${memberColumns}) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING ${memberColumns}`, [
      accountId,
      address,
      role,
      at,
      addedBy,
    ]),
  member: (accountId: string, address: string) =>
    named('member', `SELECT ${memberColumns} FROM members WHERE account_id = $1 AND address = $2`, [accountId, address]),
  members: (accountId: string) =>
    named('members', `SELECT ${memberColumns} FROM members WHERE account_id = $1 ORDER BY role = 'owner' DESC, added_at, address`, [accountId]),
  deleteMember: (accountId: string, address: string) =>
    named('delete_member', `DELETE FROM members WHERE account_id = $1 AND address = $2 AND role = 'member' RETURNING ${memberColumns}`, [
      accountId,
      address,
    ]),

  insertSession: (session: SessionRecord) =>
    named('insert_session', `INSERT INTO sessions (${sessionColumns}) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
      session.id,
      session.tokenHash,
      session.accountId,
      session.address.toLowerCase(),
      session.createdAt,
      session.expiresAt,
      session.endedAt,
    ]),
  session: (tokenHash: string) => named('session', `SELECT ${sessionColumns} FROM sessions WHERE token_hash = $1`, [tokenHash]),
  // An ended session keeps the instant it first ended.
  endSession: (tokenHash: string, at: string) =>
    named('end_session', 'UPDATE sessions SET ended_at = $2 WHERE token_hash = $1 AND ended_at IS NULL', [tokenHash, at]),
  endSessionsOf: (accountId: string, address: string, at: string) =>
    named('end_sessions_of', 'UPDATE sessions SET ended_at = $3 WHERE account_id = $1 AND address = $2 AND ended_at IS NULL RETURNING id', [
      accountId,
      address,
      at,
    ]),

  /** Expired nonces go with each insert: those never used would otherwise pile up. */
  insertNonce: (nonce: SignInNonceRecord) =>
    named(
      'insert_nonce',
      `WITH expired AS (DELETE FROM sign_in_nonces WHERE expires_at <= $3)
       INSERT INTO sign_in_nonces (nonce, address, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
      [nonce.nonce, nonce.address.toLowerCase(), nonce.createdAt, nonce.expiresAt],
    ),
  // Deleted whether expired or not: an expired nonce is refused by the caller and never comes
  // back. Of two racing deletes the second waits for the first, then finds no row.
  takeNonce: (nonce: string) =>
    named('take_nonce', 'DELETE FROM sign_in_nonces WHERE nonce = $1 RETURNING nonce, address, created_at, expires_at', [nonce]),

  aliasRules: (accountId: string) =>
    named('alias_rules', 'SELECT alias, candidates, reasoning, updated_at, updated_by FROM alias_rules WHERE account_id = $1 ORDER BY alias', [
      accountId,
    ]),
  upsertAliasRule: (accountId: string, rule: AliasRule) =>
    named(
      'upsert_alias_rule',
      `INSERT INTO alias_rules (account_id, alias, candidates, reasoning, updated_at, updated_by) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (account_id, alias) DO UPDATE SET candidates = EXCLUDED.candidates, reasoning = EXCLUDED.reasoning,
         updated_at = EXCLUDED.updated_at, updated_by = EXCLUDED.updated_by`,
      [accountId, rule.alias, rule.candidates, rule.reasoning, rule.updatedAt, rule.updatedBy],
    ),

  auditFiltered: (accountId: string, limit: number, beforeId: number | null, actor: string | null, action: string | null) =>
    named(
      'audit_filtered',
      `SELECT id, account_id, at, actor, action, detail FROM audit_log
       WHERE account_id = $1 AND ($3::bigint IS NULL OR id < $3) AND ($4::text IS NULL OR lower(actor) = lower($4))
         AND ($5::text IS NULL OR action = $5 OR left(action, length($5) + 1) = $5 || '.')
       ORDER BY id DESC LIMIT $2`,
      [accountId, limit, beforeId, actor, action],
    ),
  auditBefore: (accountId: string, beforeId: number, limit: number) =>
    named(
      'audit_before',
      'SELECT id, account_id, at, actor, action, detail FROM audit_log WHERE account_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3',
      [accountId, beforeId, limit],
    ),
} satisfies Record<string, (...args: never[]) => Statement>;
