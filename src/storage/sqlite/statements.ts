import type { Database, Statement } from 'better-sqlite3';
import type { SqliteApiKeyRow, SqliteAuditRow, SqliteFixQuoteRow, SqliteFixRunEventRow, SqliteFixRunRow, SqliteReceiptRow } from './sqlite-rows.ts';

const keyColumns =
  'id, account_id, name, prefix, hash, scopes, models, daily_limit_nano, rate_limit_per_minute, expires_at, revoked_at, created_at, last_used_at';
const receiptInsertColumns =
  'id, request_id, account_id, key_id, key_prefix, created_at, created_ns, status, endpoint, stream, requested_model, answering_model, attempts, warnings, usage, usage_estimated, prices, hold_nano, cost_nano, latency_ms, time_to_first_token_ms, error_code';
/** A receipt as read: created_ns as text, past what a JS number holds exactly. */
export const receiptColumns = receiptInsertColumns.replace('created_ns', 'CAST(created_ns AS TEXT) AS created_ns');
const fixQuoteColumns =
  'id, account_id, key_id, agent, tier, input, input_tokens, estimated_cost_nano, max_cost_nano, step_budget, created_at, expires_at';
const fixRunColumns =
  'id, quote_id, account_id, key_id, receipt_id, agent, tier, max_cost_nano, status, created_at, finished_at, result, cancel_requested';
const fixRunEventColumns = 'run_id, sequence, at, type, data';

function namedValues(columns: string): string {
  return columns
    .split(', ')
    .map((column) => `@${column}`)
    .join(', ');
}

/** Every statement the store runs, prepared once per connection. */
export interface Statements {
  ensureAccount: Statement<[id: string, createdAt: string]>;
  creditAccount: Statement<[id: string, nano: number, createdAt: string], number>;
  debitAccount: Statement<[nano: number, id: string]>;
  balance: Statement<[accountId: string], number>;

  insertKey: Statement<[SqliteApiKeyRow]>;
  keyByHash: Statement<[hash: string], SqliteApiKeyRow>;
  keysOfAccount: Statement<[accountId: string], SqliteApiKeyRow>;
  activeKeysMatching: Statement<[{ accountId: string; idOrPrefix: string }], SqliteApiKeyRow>;
  revokeKey: Statement<[at: string, id: string], SqliteApiKeyRow>;
  touchKey: Statement<[{ id: string; at: string }]>;

  /** Inserts nothing when the account already has a receipt at `created_ns`. */
  insertReceipt: Statement<[Omit<SqliteReceiptRow, 'created_ns'> & { created_ns: bigint }]>;
  /** The first created_ns of the account from `from` up that is above every one taken below `end`. */
  nextReceiptInstant: Statement<[{ accountId: string; from: bigint; end: bigint }], bigint>;
  receipt: Statement<[accountId: string, id: string], SqliteReceiptRow>;
  /** The created_ns of the receipt with this id, if written. */
  receiptInstant: Statement<[id: string], bigint>;
  newestReceipts: Statement<[accountId: string, limit: number], SqliteReceiptRow>;
  receiptsBefore: Statement<[accountId: string, beforeNanos: bigint, limit: number], SqliteReceiptRow>;

  insertFunds: Statement<[accountId: string, at: string, nano: number, note: string | null]>;
  ledgerTotals: Statement<[{ accountId: string }], { funds: number; charges: number }>;

  insertAudit: Statement<[accountId: string, at: string, actor: string, action: string, detail: string]>;
  newestAudit: Statement<[accountId: string, limit: number], SqliteAuditRow>;

  insertFixQuote: Statement<[SqliteFixQuoteRow]>;
  fixQuote: Statement<[accountId: string, id: string], SqliteFixQuoteRow>;
  insertFixRun: Statement<[SqliteFixRunRow]>;
  fixRun: Statement<[accountId: string, id: string], SqliteFixRunRow>;
  fixRunOfQuote: Statement<[quoteId: string], SqliteFixRunRow>;
  fixRunOfAccountQuote: Statement<[accountId: string, quoteId: string], SqliteFixRunRow>;
  finishFixRun: Statement<[{ id: string; status: string; result: string; finishedAt: string }]>;
  failRecoveredFixRun: Statement<[{ receiptId: string; result: string; finishedAt: string }]>;
  requestFixRunCancel: Statement<[accountId: string, id: string], SqliteFixRunRow>;
  insertFixRunEvent: Statement<[SqliteFixRunEventRow]>;
  fixRunEventsAfter: Statement<[runId: string, afterSequence: number], SqliteFixRunEventRow>;

  dataVersion: Statement<[], number>;
}

/** Prepare after migrations ran: SQLite refuses to prepare a statement on a missing table. */
export function prepareStatements(db: Database): Statements {
  return {
    ensureAccount: db.prepare('INSERT OR IGNORE INTO accounts (id, balance_nano, created_at) VALUES (?, 0, ?)'),
    creditAccount: db
      .prepare<[string, number, string], number>(
        `INSERT INTO accounts (id, balance_nano, created_at) VALUES (?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET balance_nano = balance_nano + excluded.balance_nano
         RETURNING balance_nano`,
      )
      .pluck(),
    debitAccount: db.prepare('UPDATE accounts SET balance_nano = balance_nano - ? WHERE id = ?'),
    balance: db.prepare<[string], number>('SELECT balance_nano FROM accounts WHERE id = ?').pluck(),

    insertKey: db.prepare(`INSERT INTO api_keys (${keyColumns}) VALUES (${namedValues(keyColumns)})`),
    keyByHash: db.prepare(`SELECT ${keyColumns} FROM api_keys WHERE hash = ?`),
    keysOfAccount: db.prepare(`SELECT ${keyColumns} FROM api_keys WHERE account_id = ? ORDER BY created_at DESC, id DESC`),
    // LIMIT 2 is enough to tell "one match" from "ambiguous".
    activeKeysMatching: db.prepare(
      `SELECT ${keyColumns} FROM api_keys
       WHERE account_id = @accountId AND revoked_at IS NULL AND (id = @idOrPrefix OR prefix = @idOrPrefix) LIMIT 2`,
    ),
    revokeKey: db.prepare(`UPDATE api_keys SET revoked_at = ? WHERE id = ? RETURNING ${keyColumns}`),
    // Never move backwards: a long stream can finish after a later request's receipt.
    touchKey: db.prepare('UPDATE api_keys SET last_used_at = @at WHERE id = @id AND (last_used_at IS NULL OR last_used_at < @at)'),

    // The conflict target is the instant alone: a duplicate id still fails the write.
    insertReceipt: db.prepare(
      `INSERT INTO receipts (${receiptInsertColumns}) VALUES (${namedValues(receiptInsertColumns)}) ON CONFLICT (account_id, created_ns) DO NOTHING`,
    ),
    nextReceiptInstant: db
      .prepare<[{ accountId: string; from: bigint; end: bigint }], bigint>(
        `SELECT coalesce(max(created_ns) + 1, @from) FROM receipts WHERE account_id = @accountId AND created_ns >= @from AND created_ns < @end`,
      )
      .pluck()
      .safeIntegers(),
    receipt: db.prepare(`SELECT ${receiptColumns} FROM receipts WHERE account_id = ? AND id = ?`),
    receiptInstant: db.prepare<[string], bigint>('SELECT created_ns FROM receipts WHERE id = ?').pluck().safeIntegers(),
    newestReceipts: db.prepare(`SELECT ${receiptColumns} FROM receipts WHERE account_id = ? ORDER BY created_ns DESC LIMIT ?`),
    receiptsBefore: db.prepare(`SELECT ${receiptColumns} FROM receipts WHERE account_id = ? AND created_ns < ? ORDER BY created_ns DESC LIMIT ?`),

    insertFunds: db.prepare("INSERT INTO ledger_entries (account_id, at, kind, amount_nano, receipt_id, note) VALUES (?, ?, 'funds', ?, NULL, ?)"),
    // Funds come from the ledger; charges are the receipts' costs.
    ledgerTotals: db.prepare(
      `SELECT (SELECT coalesce(sum(amount_nano), 0) FROM ledger_entries WHERE account_id = @accountId AND kind = 'funds') AS funds,
              (SELECT coalesce(sum(cost_nano), 0) FROM receipts WHERE account_id = @accountId AND cost_nano > 0) AS charges`,
    ),

    insertAudit: db.prepare('INSERT INTO audit_log (account_id, at, actor, action, detail) VALUES (?, ?, ?, ?, ?)'),
    newestAudit: db.prepare('SELECT id, account_id, at, actor, action, detail FROM audit_log WHERE account_id = ? ORDER BY id DESC LIMIT ?'),

    insertFixQuote: db.prepare(`INSERT INTO fix_quotes (${fixQuoteColumns}) VALUES (${namedValues(fixQuoteColumns)})`),
    fixQuote: db.prepare(`SELECT ${fixQuoteColumns} FROM fix_quotes WHERE account_id = ? AND id = ?`),
    insertFixRun: db.prepare(`INSERT INTO fix_runs (${fixRunColumns}) VALUES (${namedValues(fixRunColumns)})`),
    fixRun: db.prepare(`SELECT ${fixRunColumns} FROM fix_runs WHERE account_id = ? AND id = ?`),
    fixRunOfQuote: db.prepare(`SELECT ${fixRunColumns} FROM fix_runs WHERE quote_id = ?`),
    fixRunOfAccountQuote: db.prepare(`SELECT ${fixRunColumns} FROM fix_runs WHERE account_id = ? AND quote_id = ?`),
    // Only a running run ends: recovery may have closed it meanwhile.
    finishFixRun: db.prepare(
      "UPDATE fix_runs SET status = @status, result = @result, finished_at = @finishedAt WHERE id = @id AND status = 'running'",
    ),
    failRecoveredFixRun: db.prepare(
      "UPDATE fix_runs SET status = 'failed', result = @result, finished_at = @finishedAt WHERE receipt_id = @receiptId AND status = 'running'",
    ),
    // Returns the run whatever its status; the flag is set only while it runs.
    requestFixRunCancel: db.prepare(
      `UPDATE fix_runs SET cancel_requested = (cancel_requested OR status = 'running') WHERE account_id = ? AND id = ? RETURNING ${fixRunColumns}`,
    ),
    insertFixRunEvent: db.prepare(`INSERT INTO fix_run_events (${fixRunEventColumns}) VALUES (${namedValues(fixRunEventColumns)})`),
    fixRunEventsAfter: db.prepare(`SELECT ${fixRunEventColumns} FROM fix_run_events WHERE run_id = ? AND sequence > ? ORDER BY sequence`),

    dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
  };
}
