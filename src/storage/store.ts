import type {
  AccountSummary,
  ApiKeyRecord,
  AuditEntry,
  FixQuoteRecord,
  FixRunEvent,
  FixRunRecord,
  FixRunStart,
  FixRunStatus,
  HoldDecision,
  HoldRecord,
  ReceiptRecord,
} from './records.ts';

/** The one account of an embedded deployment (decisions: one deployment serves one workspace). */
export const DEFAULT_ACCOUNT_ID = 'default';

export interface ReceiptPage {
  data: ReceiptRecord[];
  hasMore: boolean;
}

/**
 * Storage port. Every backend (SQLite now, PostgreSQL later) implements it and passes the
 * one contract suite in store-contract.ts. All methods are async so either backend fits.
 */
export interface Store {
  migrate(): Promise<void>;

  insertKey(key: ApiKeyRecord): Promise<void>;
  findKeyByHash(hash: string): Promise<ApiKeyRecord | null>;
  /** Newest first. */
  listKeys(accountId: string): Promise<ApiKeyRecord[]>;
  /** Revoke by key id or display prefix; writes the audit entry in the same transaction. Null when no such active key. */
  revokeKey(accountId: string, idOrPrefix: string, at: string, actor: string): Promise<ApiKeyRecord | null>;
  /**
   * A value that changes whenever another process may have changed keys. Cheap enough to call
   * on every request (no network round trip); the key cache is dropped when it changes.
   */
  keysChangeToken(): Promise<number>;

  /**
   * Atomically reserve `hold.amountNano` when it fits the available balance (balance minus
   * holds), the key's daily limit (`dailyLimitNano`: day's charges + the key's holds) and the
   * account's monthly budget (month's charges + holds). Nothing is written when it does not fit.
   */
  placeHold(hold: HoldRecord, dailyLimitNano: number | null): Promise<HoldDecision>;
  /**
   * Settle a request in one transaction: write the receipt, charge its cost (to the balance,
   * the key's day and the account's month), release its hold (same id) if still there, mark
   * the key used. The cost is charged in full even above the hold.
   */
  recordReceipt(receipt: ReceiptRecord): Promise<void>;
  /** Push the expiry of every hold of `owner` (its process is alive). */
  extendHolds(owner: string, expiresAt: string): Promise<void>;
  /**
   * Release holds whose owner is gone (expired, or `isOwnerDead` says so) and close each
   * one's receipt as failed with cost 0; a fix run whose receipt id is the hold's, still
   * running, ends failed in the same transaction (see recoveredFixRunResult). Returns the
   * receipts written.
   */
  releaseOrphanedHolds(now: string, isOwnerDead: (owner: string) => boolean): Promise<ReceiptRecord[]>;
  listHolds(accountId: string): Promise<HoldRecord[]>;
  accountSummary(accountId: string, month: string): Promise<AccountSummary>;
  /** Charges and holds of a key on a UTC day. */
  keyDaySpend(keyId: string, day: string): Promise<{ chargedNano: number; heldNano: number }>;
  /** Null removes the budget. Written to the audit log. */
  setMonthlyBudget(accountId: string, nano: number | null, actor: string): Promise<void>;
  getReceipt(accountId: string, id: string): Promise<ReceiptRecord | null>;
  /** Newest first; `before` is an ISO instant, exclusive. */
  listReceipts(accountId: string, options: { limit: number; before?: string }): Promise<ReceiptPage>;

  /** Balance in nano-USD (funds added minus charges). */
  getBalance(accountId: string): Promise<number>;
  /** Adds funds and the audit entry in one transaction; returns the new balance. */
  addFunds(accountId: string, nano: number, actor: string, note?: string): Promise<number>;
  /** Sums of the ledger by kind, nano-USD; `funds - charges` always equals the balance. */
  ledgerTotals(accountId: string): Promise<{ funds: number; charges: number }>;

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
  finishFixRun(runId: string, status: Exclude<FixRunStatus, 'running'>, result: Record<string, unknown>, finishedAt: string, receipt: ReceiptRecord): Promise<boolean>;
  /** Mark a running run of the account for cancellation; returns the run (null when not on the account). */
  requestFixRunCancel(accountId: string, id: string): Promise<FixRunRecord | null>;

  appendAudit(entry: Omit<AuditEntry, 'id'>): Promise<void>;
  listAudit(accountId: string, limit: number): Promise<AuditEntry[]>;

  close(): Promise<void>;
}
