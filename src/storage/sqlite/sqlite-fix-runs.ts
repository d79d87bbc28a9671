import type { Database } from 'better-sqlite3';
import { assertHoldOfRun } from '../fix-run-hold.ts';
import { recoveredFixRunResult } from '../orphan-receipt.ts';
import type { FixRunRecord, FixRunStart, FixRunStatus, HoldRecord, ReceiptRecord } from '../records.ts';
import { fixRunFromSqlite, fixRunToSqlite } from './sqlite-rows.ts';
import type { createSqliteLedger } from './sqlite-ledger.ts';
import type { Statements } from './statements.ts';

type Ledger = ReturnType<typeof createSqliteLedger>;

/**
 * Starting and ending fix runs on SQLite. Each is a transaction; inside the write batcher's
 * transaction it runs as a savepoint, so a throw undoes its hold or receipt with it.
 * `recordReceipt` is the store's own receipt transaction: a run settles exactly as a request.
 */
export function createSqliteFixRuns(db: Database, sql: () => Statements, ledger: Ledger, recordReceipt: (receipt: ReceiptRecord) => void) {
  const start = db.transaction((run: FixRunRecord, hold: HoldRecord, dailyLimitNano: number | null): FixRunStart => {
    assertHoldOfRun(run, hold);
    const statements = sql();
    const existing = statements.fixRunOfQuote.get(run.quoteId);
    if (existing) return { started: false, existing: fixRunFromSqlite(existing) };
    const decision = ledger.placeHold(hold, dailyLimitNano);
    if (!decision.placed) return { started: false, refused: decision };
    statements.insertFixRun.run(fixRunToSqlite(run));
    return { started: true };
  });

  const finish = db.transaction(
    (
      runId: string,
      status: Exclude<FixRunStatus, 'running'>,
      result: Record<string, unknown>,
      finishedAt: string,
      receipt: ReceiptRecord,
    ): boolean => {
      const { changes } = sql().finishFixRun.run({ id: runId, status, result: JSON.stringify(result), finishedAt });
      if (changes === 0) return false;
      recordReceipt(receipt);
      return true;
    },
  );

  /** Inside recovery's transaction, after the hold `receiptId` was released and charged `costNano`: its run, if still running, failed. */
  function endRecovered(receiptId: string, now: string, costNano: number): void {
    sql().failRecoveredFixRun.run({ receiptId, result: JSON.stringify(recoveredFixRunResult(costNano)), finishedAt: now });
  }

  return { start, finish, endRecovered };
}
