import type { FixQuoteRecord, FixRunEvent, FixRunRecord, FixRunStart, FixRunStatus, HoldRecord, ReceiptRecord } from './records.ts';

/** Fix quotes and runs, with their events. */
export interface FixRunStore {
  insertFixQuote(quote: FixQuoteRecord): Promise<void>;
  getFixQuote(accountId: string, id: string): Promise<FixQuoteRecord | null>;
  /**
   * Start the one run of a quote, atomically: when the quote already has a run, return it and
   * write nothing; else place `hold` exactly as placeHold does and, only when it fits, insert
   * `run` (status running) in the same transaction. Two racing starts of one quote: one wins.
   */
  startFixRun(run: FixRunRecord, hold: HoldRecord, dailyLimitNano: number | null): Promise<FixRunStart>;
  getFixRun(accountId: string, id: string): Promise<FixRunRecord | null>;
  /** The run a quote started, if it ran (also after the quote expired). */
  getFixRunByQuote(accountId: string, quoteId: string): Promise<FixRunRecord | null>;
  /** Sequences are given by the caller; a duplicate (run, sequence) is an error. */
  appendFixRunEvent(event: FixRunEvent): Promise<void>;
  /** Events of a run with sequence above `afterSequence`, oldest first. */
  listFixRunEvents(runId: string, afterSequence: number): Promise<FixRunEvent[]>;
  /**
   * End a running run and settle its receipt (exactly as recordReceipt) in one transaction.
   * A run no longer running (recovery closed it meanwhile) is left alone and no receipt is
   * written; returns whether this call ended it.
   */
  finishFixRun(
    runId: string,
    status: Exclude<FixRunStatus, 'running'>,
    result: Record<string, unknown>,
    finishedAt: string,
    receipt: ReceiptRecord,
  ): Promise<boolean>;
  /** Mark a running run of the account for cancellation; returns the run (null when not on the account). */
  requestFixRunCancel(accountId: string, id: string): Promise<FixRunRecord | null>;
}
