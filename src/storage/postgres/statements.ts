import type { QueryConfig } from 'pg';
import type { ApiKeyRecord, FixQuoteRecord, FixRunEvent, FixRunRecord, FixRunStatus, HoldRecord, ReceiptRecord } from '../records.ts';
import { instantNanos } from '../receipt-order.ts';
import { receiptToRow } from '../row-mapping.ts';
import { jsonParameter } from './json-parameter.ts';
import type { LeaseRenewal } from './postgres-balance-leases.ts';

/**
 * Every statement the PostgreSQL store runs. Each has a name, so pg prepares it once per pooled
 * connection and later runs send only Bind/Execute: no parsing or planning on the hot path.
 * Names start with `gateway_` and must stay unique per text.
 */
type Statement = QueryConfig<unknown[]>;

const keyColumns =
  'id, account_id, name, prefix, hash, scopes, models, daily_limit_nano, rate_limit_per_minute, expires_at, revoked_at, created_at, last_used_at';
/** A receipt as read: created_ns as text, past what a JS number holds exactly (the INT8 parser would refuse it). */
export const receiptColumns =
  'id, request_id, account_id, key_id, key_prefix, created_at, created_ns::text AS created_ns, status, endpoint, stream, requested_model, answering_model, attempts, warnings, usage, usage_estimated, prices, hold_nano, cost_nano, latency_ms, time_to_first_token_ms, error_code';
const holdColumns =
  'id, request_id, account_id, key_id, key_prefix, endpoint, stream, requested_model, amount_nano, day, month, created_at, owner, expires_at, estimated_cost_nano';
const fixQuoteColumns =
  'id, account_id, key_id, agent, tier, input, input_tokens, estimated_cost_nano, max_cost_nano, step_budget, created_at, expires_at';
const fixRunColumns =
  'id, quote_id, account_id, key_id, receipt_id, agent, tier, max_cost_nano, status, created_at, finished_at, result, cancel_requested';

/** `$1, $2, ... $count` */
function placeholders(count: number): string {
  return Array.from({ length: count }, (_, index) => `$${index + 1}`).join(', ');
}

function named(name: string, text: string, values: unknown[]): Statement {
  return { name: `gateway_${name}`, text, values };
}

const placeHoldText = `SELECT placed, reason, remaining_nano FROM gateway_place_hold(${placeholders(16)})`;
const startFixRunText = `SELECT started, reason, remaining_nano, existing_run_id FROM gateway_start_fix_run(${placeholders(26)})`;

/**
 * A settlement as gateway_apply_batch and gateway_record_receipt take it: the receipt's columns,
 * whether it moves its key's last use, and the balance lease it is charged to (null: none).
 */
export function settlementJson(receipt: ReceiptRecord, touchKey: boolean, leaseId: string | null): Record<string, unknown> {
  return { op: 'receipt', ...receiptToRow(receipt), touch_key: touchKey, lease_id: leaseId };
}

/** The parameters a hold is placed with, after whose request it is: the same for a request's hold and a fix run's. */
function holdTerms(hold: HoldRecord, dailyLimitNano: number | null): unknown[] {
  const { endpoint, stream, requestedModel, amountNano, day, month, createdAt, owner, expiresAt } = hold;
  return [endpoint, stream, requestedModel, amountNano, day, month, createdAt, owner, expiresAt, dailyLimitNano, hold.estimatedCostNano ?? 0];
}

export const statements = {
  // Accounts and funds
  ensureAccount: (id: string, createdAt: string) =>
    named('ensure_account', 'INSERT INTO accounts (id, balance_nano, created_at) VALUES ($1, 0, $2) ON CONFLICT (id) DO NOTHING', [id, createdAt]),
  creditAccount: (id: string, nano: number, at: string) =>
    named(
      'credit_account_leased',
      `INSERT INTO accounts AS a (id, balance_nano, created_at) VALUES ($1, $2, $3)
       ON CONFLICT (id) DO UPDATE SET balance_nano = a.balance_nano + EXCLUDED.balance_nano
       RETURNING balance_nano::text AS balance_text,
         (SELECT coalesce(sum(l.charged_nano - l.folded_nano), 0) FROM balance_leases l WHERE l.account_id = $1)::bigint AS leased_nano`,
      [id, nano, at],
    ),
  /** The balance less the charges of leases not yet folded into it (gateway_lease_totals). */
  balance: (accountId: string) =>
    named(
      'balance_after_leases',
      `SELECT a.balance_nano - (SELECT coalesce(sum(l.charged_nano - l.folded_nano), 0) FROM balance_leases l WHERE l.account_id = $1)::bigint AS balance_nano
       FROM accounts a WHERE a.id = $1`,
      [accountId],
    ),
  insertFunds: (accountId: string, at: string, nano: number, note: string | null) =>
    named('insert_funds', "INSERT INTO ledger_entries (account_id, at, kind, amount_nano, note) VALUES ($1, $2, 'funds', $3, $4)", [
      accountId,
      at,
      nano,
      note,
    ]),
  // Funds come from the ledger; charges are the receipts' costs. sum() of BIGINT is numeric: back to BIGINT.
  ledgerTotals: (accountId: string) =>
    named(
      'ledger_totals',
      `SELECT (SELECT coalesce(sum(amount_nano), 0)::bigint FROM ledger_entries WHERE account_id = $1 AND kind = 'funds') AS funds,
              (SELECT coalesce(sum(cost_nano), 0)::bigint FROM receipts WHERE account_id = $1 AND cost_nano > 0) AS charges`,
      [accountId],
    ),
  setBudget: (accountId: string, nano: number | null) =>
    // The budget it replaces, for the audit entry, from the same statement.
    named(
      'set_budget',
      `UPDATE accounts SET monthly_budget_nano = $2 FROM accounts AS old
       WHERE accounts.id = $1 AND old.id = $1 RETURNING old.monthly_budget_nano AS before`,
      [accountId, nano],
    ),

  // API keys
  insertKey: (key: ApiKeyRecord) =>
    named('insert_key', `INSERT INTO api_keys (${keyColumns}) VALUES (${placeholders(13)})`, [
      key.id,
      key.accountId,
      key.name,
      key.prefix,
      key.hash,
      key.scopes,
      key.models,
      key.dailyLimitNano,
      key.rateLimitPerMinute,
      key.expiresAt,
      key.revokedAt,
      key.createdAt,
      key.lastUsedAt,
    ]),
  keyByHash: (hash: string) => named('key_by_hash', `SELECT ${keyColumns} FROM api_keys WHERE hash = $1`, [hash]),
  keysOfAccount: (accountId: string) =>
    named('keys_of_account', `SELECT ${keyColumns} FROM api_keys WHERE account_id = $1 ORDER BY created_at DESC, id DESC`, [accountId]),
  // LIMIT 2 is enough to tell "one match" from "ambiguous"; FOR UPDATE makes a concurrent revoke wait, then find nothing.
  activeKeysMatching: (accountId: string, idOrPrefix: string) =>
    named(
      'active_keys_matching',
      `SELECT ${keyColumns} FROM api_keys
       WHERE account_id = $1 AND revoked_at IS NULL AND (id = $2 OR prefix = $2) LIMIT 2 FOR UPDATE`,
      [accountId, idOrPrefix],
    ),
  revokeKey: (id: string, at: string) => named('revoke_key', `UPDATE api_keys SET revoked_at = $2 WHERE id = $1 RETURNING ${keyColumns}`, [id, at]),
  bumpKeyChanges: () => named('bump_key_changes', 'UPDATE key_changes SET version = version + 1 WHERE id', []),
  keyChangesVersion: () => named('key_changes_version', 'SELECT version FROM key_changes WHERE id', []),

  // Receipts
  /** One settlement (settlementJson) alone: receipt, charge, hold release and last use in one statement (gateway_record_receipt); returns the receipt's created_ns. */
  recordReceipt: (settlement: Record<string, unknown>) =>
    named('record_receipt', 'SELECT gateway_record_receipt($1::jsonb)::text AS created_ns', [jsonParameter(settlement)]),
  receipt: (accountId: string, id: string) =>
    named('receipt', `SELECT ${receiptColumns} FROM receipts WHERE account_id = $1 AND id = $2`, [accountId, id]),
  newestReceipts: (accountId: string, limit: number) =>
    named('newest_receipts', `SELECT ${receiptColumns} FROM receipts WHERE account_id = $1 ORDER BY created_ns DESC LIMIT $2`, [accountId, limit]),
  /** `before` is an ISO instant: receipts with a smaller created_ns. */
  receiptsBefore: (accountId: string, before: string, limit: number) =>
    named(
      'receipts_before',
      `SELECT ${receiptColumns} FROM receipts WHERE account_id = $1 AND created_ns < $2::bigint ORDER BY created_ns DESC LIMIT $3`,
      [accountId, instantNanos(before).toString(), limit],
    ),

  // Holds
  /** Checks and the insert in one statement (gateway_place_hold). */
  placeHold: (hold: HoldRecord, dailyLimitNano: number | null) =>
    named('place_hold', placeHoldText, [hold.id, hold.requestId, hold.accountId, hold.keyId, hold.keyPrefix, ...holdTerms(hold, dailyLimitNano)]),
  extendHolds: (owner: string, ids: readonly string[], expiresAt: string) =>
    named('extend_live_holds', 'UPDATE holds SET expires_at = $2 WHERE owner = $1 AND id = ANY($3::text[])', [owner, expiresAt, ids]),
  /** Owners of holds or leases: the processes whose death recovery looks for. */
  /** Holds taken out of their lease (their settlement failed for good): ordinary holds from now on. */
  detachHolds: (ids: readonly string[]) => named('detach_holds', 'UPDATE holds SET lease_id = NULL WHERE id = ANY($1::text[])', [ids]),
  holdOwners: () => named('hold_and_lease_owners', 'SELECT owner FROM holds UNION SELECT owner FROM balance_leases', []),
  leasesToRelease: (now: string, deadOwners: string[]) =>
    named('leases_to_release_by_owner', 'SELECT id, owner FROM balance_leases WHERE expires_at < $1 OR owner = ANY($2::text[])', [now, deadOwners]),
  /** Releases a lease whose owner is gone, adopting the holds journaled in it (gateway_release_lease). */
  releaseLease: (id: string, now: string, deadOwners: string[], journaled: ReadonlyArray<Record<string, unknown>> = []) =>
    named('release_lease_journaled', 'SELECT gateway_release_lease($1, $2, $3::text[], $4::jsonb) AS released', [
      id,
      now,
      deadOwners,
      jsonParameter(journaled),
    ]),
  /** Journaled holds made ordinary holds (gateway_adopt_holds). */
  adoptHolds: (holds: ReadonlyArray<Record<string, unknown>>) =>
    named('adopt_holds', 'SELECT gateway_adopt_holds($1::jsonb)', [jsonParameter(holds)]),
  /** Which of these leases still exist. */
  leasesThere: (ids: readonly string[]) => named('leases_there', 'SELECT id FROM balance_leases WHERE id = ANY($1::text[])', [ids]),
  /** Of these journal entries, those with a hold row (adopted) or a receipt (settled; the entry goes once its commit is flushed). */
  holdsThere: (ids: readonly string[]) =>
    named('holds_or_receipts_there', 'SELECT id FROM holds WHERE id = ANY($1::text[]) UNION SELECT id FROM receipts WHERE id = ANY($1::text[])', [
      ids,
    ]),
  ledgerIdentity: () => named('ledger_identity', 'SELECT id FROM ledger_identity', []),
  /** Take, top up, renew, shrink or hand back a balance lease (gateway_renew_lease). */
  renewLease: (lease: LeaseRenewal) =>
    named('renew_key_lease', `SELECT lease_id, granted_nano, charged_nano FROM gateway_renew_lease(${placeholders(12)})`, [
      lease.leaseId,
      lease.newId,
      lease.accountId,
      lease.owner,
      lease.month,
      lease.targetNano,
      lease.keepNano,
      lease.expiresAt,
      new Date().toISOString(),
      lease.keyId,
      lease.day,
      lease.dailyLimitNano,
    ]),
  /** A batch of one (postgres-group-commit.ts): a write in a lease run alone. */
  applyBatch: (ops: Array<Record<string, unknown>>) => named('apply_batch', 'SELECT gateway_apply_batch($1::jsonb) AS results', [jsonParameter(ops)]),
  holdsToRelease: (now: string, deadOwners: string[]) =>
    named('holds_to_release', `SELECT id FROM holds WHERE expires_at < $1 OR owner = ANY($2::text[])`, [now, deadOwners]),
  /** Takes one orphan, re-checking the reason: a live owner may have renewed it meanwhile. */
  takeOrphanedHold: (id: string, now: string, deadOwners: string[]) =>
    named('take_orphaned_hold', `DELETE FROM holds WHERE id = $1 AND (expires_at < $2 OR owner = ANY($3::text[])) RETURNING ${holdColumns}`, [
      id,
      now,
      deadOwners,
    ]),
  holdsOfAccount: (accountId: string) =>
    named('holds_of_account', `SELECT ${holdColumns} FROM holds WHERE account_id = $1 ORDER BY created_at, id`, [accountId]),
  accountSummary: (accountId: string, month: string) =>
    named(
      'account_summary_leased',
      `SELECT a.balance_nano - l.unfolded_nano AS balance_nano, a.monthly_budget_nano,
              (SELECT coalesce(sum(amount_nano), 0)::bigint FROM holds WHERE account_id = $1) AS held_nano,
              (SELECT count(*) FROM holds WHERE account_id = $1) AS hold_count,
              (SELECT coalesce(sum(amount_nano), 0)::bigint FROM holds WHERE account_id = $1 AND month = $2) AS month_held_nano,
              (SELECT coalesce(sum(charged_nano), 0)::bigint FROM account_monthly_spend WHERE account_id = $1 AND month = $2)
                + l.month_unfolded_nano AS month_charged_nano
       FROM (SELECT 1) AS one LEFT JOIN accounts a ON a.id = $1 CROSS JOIN gateway_lease_totals($1, $2) AS l`,
      [accountId, month],
    ),
  keyDaySpend: (keyId: string, day: string) =>
    named(
      'key_day_spend',
      `SELECT (SELECT coalesce(sum(charged_nano), 0)::bigint FROM key_daily_spend WHERE key_id = $1 AND day = $2) AS charged_nano,
              (SELECT coalesce(sum(amount_nano), 0)::bigint FROM holds WHERE key_id = $1 AND day = $2) AS held_nano`,
      [keyId, day],
    ),

  // Fix agents
  insertFixQuote: (quote: FixQuoteRecord) =>
    named('insert_fix_quote', `INSERT INTO fix_quotes (${fixQuoteColumns}) VALUES (${placeholders(12)})`, [
      quote.id,
      quote.accountId,
      quote.keyId,
      quote.agent,
      quote.tier,
      jsonParameter(quote.input),
      quote.inputTokens,
      quote.estimatedCostNano,
      quote.maxCostNano,
      quote.stepBudget,
      quote.createdAt,
      quote.expiresAt,
    ]),
  fixQuote: (accountId: string, id: string) =>
    named('fix_quote', `SELECT ${fixQuoteColumns} FROM fix_quotes WHERE account_id = $1 AND id = $2`, [accountId, id]),
  /** Run insert, then the hold through gateway_place_hold, in one statement (gateway_start_fix_run). */
  startFixRun: (run: FixRunRecord, hold: HoldRecord, dailyLimitNano: number | null) =>
    named('start_fix_run', startFixRunText, [
      run.id,
      run.quoteId,
      run.accountId,
      run.keyId,
      run.receiptId,
      run.agent,
      run.tier,
      run.maxCostNano,
      run.status,
      run.createdAt,
      run.finishedAt,
      jsonParameter(run.result),
      run.cancelRequested,
      hold.requestId,
      hold.keyPrefix,
      ...holdTerms(hold, dailyLimitNano),
    ]),
  fixRun: (accountId: string, id: string) =>
    named('fix_run', `SELECT ${fixRunColumns} FROM fix_runs WHERE account_id = $1 AND id = $2`, [accountId, id]),
  fixRunOfQuote: (accountId: string, quoteId: string) =>
    named('fix_run_of_quote', `SELECT ${fixRunColumns} FROM fix_runs WHERE account_id = $1 AND quote_id = $2`, [accountId, quoteId]),
  fixRunById: (id: string) => named('fix_run_by_id', `SELECT ${fixRunColumns} FROM fix_runs WHERE id = $1`, [id]),
  /** Only a running run ends: recovery may have closed it meanwhile (it then waits for this lock, or this waits for it). */
  finishFixRun: (id: string, status: Exclude<FixRunStatus, 'running'>, result: Record<string, unknown>, finishedAt: string) =>
    named('finish_fix_run', "UPDATE fix_runs SET status = $2, result = $3, finished_at = $4 WHERE id = $1 AND status = 'running' RETURNING id", [
      id,
      status,
      jsonParameter(result),
      finishedAt,
    ]),
  /**
   * Recovery locks the run of a hold before taking the hold, in the order finishing takes them
   * (run, then hold inside gateway_record_receipt): the two never deadlock.
   */
  lockFixRunOfReceipt: (receiptId: string) =>
    named('lock_fix_run_of_receipt', 'SELECT id FROM fix_runs WHERE receipt_id = $1 FOR NO KEY UPDATE', [receiptId]),
  failRecoveredFixRun: (receiptId: string, result: Record<string, unknown>, finishedAt: string) =>
    named(
      'fail_recovered_fix_run',
      "UPDATE fix_runs SET status = 'failed', result = $2, finished_at = $3 WHERE receipt_id = $1 AND status = 'running'",
      [receiptId, jsonParameter(result), finishedAt],
    ),
  /** Returns the run whatever its status; the flag is set only while it runs. */
  requestFixRunCancel: (accountId: string, id: string) =>
    named(
      'request_fix_run_cancel',
      `UPDATE fix_runs SET cancel_requested = (cancel_requested OR status = 'running') WHERE account_id = $1 AND id = $2 RETURNING ${fixRunColumns}`,
      [accountId, id],
    ),
  insertFixRunEvent: (event: FixRunEvent) =>
    named('insert_fix_run_event', 'INSERT INTO fix_run_events (run_id, sequence, at, type, data) VALUES ($1, $2, $3, $4, $5)', [
      event.runId,
      event.sequence,
      event.at,
      event.type,
      jsonParameter(event.data),
    ]),
  fixRunEventsAfter: (runId: string, afterSequence: number) =>
    named(
      'fix_run_events_after',
      'SELECT run_id, sequence, at, type, data FROM fix_run_events WHERE run_id = $1 AND sequence > $2 ORDER BY sequence',
      [runId, afterSequence],
    ),

  // Audit
  insertAudit: (accountId: string, at: string, actor: string, action: string, detail: unknown) =>
    named('insert_audit', 'INSERT INTO audit_log (account_id, at, actor, action, detail) VALUES ($1, $2, $3, $4, $5)', [
      accountId,
      at,
      actor,
      action,
      jsonParameter(detail),
    ]),
  newestAudit: (accountId: string, limit: number) =>
    named('newest_audit', 'SELECT id, account_id, at, actor, action, detail FROM audit_log WHERE account_id = $1 ORDER BY id DESC LIMIT $2', [
      accountId,
      limit,
    ]),
} satisfies Record<string, (...args: never[]) => Statement>;
