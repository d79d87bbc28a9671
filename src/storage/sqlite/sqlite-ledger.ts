import type { Database, Statement } from 'better-sqlite3';
import type { AccountSummary, HoldDecision, HoldRecord, ReceiptRecord } from '../records.ts';
import { holdFromSqlite, holdToSqlite, type SqliteHoldRow } from './sqlite-rows.ts';
import { budgetChange } from '../rows/ledger-rows.ts';

const holdColumns =
  'id, request_id, account_id, key_id, key_prefix, endpoint, stream, requested_model, amount_nano, day, month, created_at, owner, expires_at, estimated_cost_nano';

function prepareLedger(db: Database) {
  const one = <T>(sql: string) => db.prepare(sql).pluck() as Statement<unknown[], T>;
  return {
    accountMoney: db.prepare<[string], { balance_nano: number; monthly_budget_nano: number | null }>(
      'SELECT balance_nano, monthly_budget_nano FROM accounts WHERE id = ?',
    ),
    heldOfAccount: db.prepare<[string], { held: number; count: number }>(
      'SELECT coalesce(sum(amount_nano), 0) AS held, count(*) AS count FROM holds WHERE account_id = ?',
    ),
    heldOfAccountMonth: one<number>('SELECT coalesce(sum(amount_nano), 0) FROM holds WHERE account_id = ? AND month = ?'),
    heldOfKeyDay: one<number>('SELECT coalesce(sum(amount_nano), 0) FROM holds WHERE key_id = ? AND day = ?'),
    chargedOfKeyDay: one<number>('SELECT coalesce(sum(charged_nano), 0) FROM key_daily_spend WHERE key_id = ? AND day = ?'),
    chargedOfAccountMonth: one<number>('SELECT coalesce(sum(charged_nano), 0) FROM account_monthly_spend WHERE account_id = ? AND month = ?'),
    insertHold: db.prepare<[SqliteHoldRow]>(
      `INSERT INTO holds (${holdColumns}) VALUES (${holdColumns
        .split(', ')
        .map((column) => `@${column}`)
        .join(', ')})`,
    ),
    holdExists: one<number>('SELECT 1 FROM holds WHERE id = ?'),
    deleteHold: db.prepare<[string], { day: string; month: string }>('DELETE FROM holds WHERE id = ? RETURNING day, month'),
    chargeKeyDay: db.prepare<[string, string, string, number]>(
      `INSERT INTO key_daily_spend (key_id, day, account_id, charged_nano) VALUES (?, ?, ?, ?)
       ON CONFLICT (key_id, day) DO UPDATE SET charged_nano = charged_nano + excluded.charged_nano`,
    ),
    chargeAccountMonth: db.prepare<[string, string, number]>(
      `INSERT INTO account_monthly_spend (account_id, month, charged_nano) VALUES (?, ?, ?)
       ON CONFLICT (account_id, month) DO UPDATE SET charged_nano = charged_nano + excluded.charged_nano`,
    ),
    extendHold: db.prepare<[string, string, string]>('UPDATE holds SET expires_at = ? WHERE owner = ? AND id = ?'),
    allHolds: db.prepare<[], SqliteHoldRow>(`SELECT ${holdColumns} FROM holds`),
    holdsOfAccount: db.prepare<[string], SqliteHoldRow>(`SELECT ${holdColumns} FROM holds WHERE account_id = ? ORDER BY created_at`),
    setBudget: db.prepare<[number | null, string]>('UPDATE accounts SET monthly_budget_nano = ? WHERE id = ?'),
    insertAudit: db.prepare<[string, string, string, string, string]>(
      'INSERT INTO audit_log (account_id, at, actor, action, detail) VALUES (?, ?, ?, ?, ?)',
    ),
  };
}

/**
 * Holds, daily and monthly spend on SQLite. Each function is a transaction; called inside
 * the write batcher's transaction it runs as a savepoint. Reads and writes of one function
 * happen under the one write lock SQLite has, so no check can race its update.
 */
export function createSqliteLedger(db: Database) {
  let prepared: ReturnType<typeof prepareLedger> | undefined;
  const sql = () => (prepared ??= prepareLedger(db));

  // Reads, then at most one insert at the very end: nothing partial to undo, so no savepoint.
  const placeHold = (hold: HoldRecord, dailyLimitNano: number | null): HoldDecision => {
    const statements = sql();
    // Placed already (a retry after a lost reply): placed, and nothing more is held.
    if (statements.holdExists.get(hold.id) !== undefined) return { placed: true };
    const account = statements.accountMoney.get(hold.accountId);
    const available = (account?.balance_nano ?? 0) - statements.heldOfAccount.get(hold.accountId)!.held;
    if (hold.amountNano > available) return { placed: false, reason: 'insufficient_balance', remainingNano: available };
    if (dailyLimitNano !== null) {
      const used = statements.chargedOfKeyDay.get(hold.keyId, hold.day)! + statements.heldOfKeyDay.get(hold.keyId, hold.day)!;
      if (used + hold.amountNano > dailyLimitNano) return { placed: false, reason: 'daily_limit', remainingNano: dailyLimitNano - used };
    }
    const budget = account?.monthly_budget_nano ?? null;
    if (budget !== null) {
      const used = statements.chargedOfAccountMonth.get(hold.accountId, hold.month)! + statements.heldOfAccountMonth.get(hold.accountId, hold.month)!;
      if (used + hold.amountNano > budget) return { placed: false, reason: 'monthly_budget', remainingNano: budget - used };
    }
    statements.insertHold.run(holdToSqlite(hold));
    return { placed: true };
  };

  /** Inside the receipt's transaction: release its hold and count its cost against the day and month. */
  function settleHold(receipt: ReceiptRecord): void {
    const statements = sql();
    const hold = statements.deleteHold.get(receipt.id);
    if (receipt.costNano <= 0) return;
    const day = hold?.day ?? receipt.createdAt.slice(0, 10);
    const month = hold?.month ?? receipt.createdAt.slice(0, 7);
    statements.chargeKeyDay.run(receipt.keyId, day, receipt.accountId, receipt.costNano);
    statements.chargeAccountMonth.run(receipt.accountId, month, receipt.costNano);
  }

  const setMonthlyBudget = db.transaction((accountId: string, nano: number | null, actor: string) => {
    const at = new Date().toISOString();
    const before = sql().accountMoney.get(accountId)?.monthly_budget_nano ?? null;
    sql().setBudget.run(nano, accountId);
    const detail = budgetChange(nano, before);
    sql().insertAudit.run(accountId, at, actor, 'budget.set', JSON.stringify(detail));
  });

  return {
    placeHold,
    settleHold,
    dropHold: (id: string) => void sql().deleteHold.get(id),
    setMonthlyBudget,
    extendHolds: db.transaction((owner: string, ids: readonly string[], expiresAt: string) => {
      for (const id of ids) sql().extendHold.run(expiresAt, owner, id);
    }),
    allHolds: () => sql().allHolds.all().map(holdFromSqlite),
    listHolds: (accountId: string) => sql().holdsOfAccount.all(accountId).map(holdFromSqlite),
    keyDaySpend: (keyId: string, day: string) => ({
      chargedNano: sql().chargedOfKeyDay.get(keyId, day)!,
      heldNano: sql().heldOfKeyDay.get(keyId, day)!,
    }),
    accountSummary(accountId: string, month: string): AccountSummary {
      const statements = sql();
      const account = statements.accountMoney.get(accountId);
      const held = statements.heldOfAccount.get(accountId)!;
      return {
        balanceNano: account?.balance_nano ?? 0,
        heldNano: held.held,
        holdCount: held.count,
        month,
        monthChargedNano: statements.chargedOfAccountMonth.get(accountId, month)!,
        monthHeldNano: statements.heldOfAccountMonth.get(accountId, month)!,
        monthlyBudgetNano: account?.monthly_budget_nano ?? null,
      };
    },
  };
}
