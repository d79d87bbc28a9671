import type { FixRunRecord, HoldRecord } from './records.ts';

/** A run's hold must be its receipt's: recovery finds the run by the released hold's id. */
export function assertHoldOfRun(run: FixRunRecord, hold: HoldRecord): void {
  if (hold.id !== run.receiptId || hold.accountId !== run.accountId) {
    throw new Error(`the hold of fix run ${run.id} must have its receipt id (${run.receiptId}) and account, got ${hold.id} on ${hold.accountId}`);
  }
}
