import type { AccountSummary, FundsEntry, HoldDecision, HoldRecord, ReceiptRecord } from './records.ts';

/**
 * Where a gateway process on a shared database records the holds it placed in its balance lease,
 * instead of writing each to the database before the provider is called (Redis:
 * postgres/redis-hold-journal.ts; why and what it survives: postgres/postgres-hold-journal.ts).
 * Entries are JSON texts by hold id, per `owner` (a process) within `scope` (one ledger).
 */
export interface HoldJournal {
  /** False while a write would not be answered at once (disconnected): holds then take the database path. */
  available(): boolean;
  /** Stores (or replaces) these entries of `owner`; resolves once they are stored. */
  put(scope: string, owner: string, entries: ReadonlyMap<string, string>): Promise<void>;
  remove(scope: string, owner: string, ids: readonly string[]): Promise<void>;
  entries(scope: string, owner: string): Promise<Map<string, string>>;
  /** Owners that stored an entry and were not dropped since. */
  owners(scope: string): Promise<string[]>;
  /** Forgets `owner` when it has no entry left. */
  dropOwner(scope: string, owner: string): Promise<void>;
}

/** The money: holds, settlements, balance, funds and budgets. */
export interface LedgerStore {
  /**
   * Atomically reserve `hold.amountNano` when it fits the available balance (balance minus
   * holds), the key's daily limit (`dailyLimitNano`: day's charges + the key's holds) and the
   * account's monthly budget (month's charges + holds). Nothing is written when it does not fit.
   */
  placeHold(hold: HoldRecord, dailyLimitNano: number | null): Promise<HoldDecision>;
  /**
   * Settle a request in one transaction: write the receipt, charge its cost (to the balance,
   * the key's day and the account's month), release its hold (same id) if still there, mark
   * the key used. The cost is charged in full even above the hold. The receipt is stored at an
   * instant in its createdAt's millisecond that no other receipt of the account has, after
   * those already there, without locking any row (receipt-order.ts).
   */
  recordReceipt(receipt: ReceiptRecord): Promise<void>;
  /**
   * Push the expiry of the holds of `owner` whose ids are given: the requests it still has in
   * flight. A hold it placed but no longer tracks (its settlement failed for good) is left to
   * expire and be recovered.
   */
  extendHolds(owner: string, ids: readonly string[], expiresAt: string): Promise<void>;
  /**
   * Release holds whose owner is gone (expired, or `isOwnerDead` says so) and close each
   * one's receipt as failed with cost 0; a fix run whose receipt id is the hold's, still
   * running, ends failed in the same transaction (see recoveredFixRunResult). Returns the
   * receipts written, each with its createdAt as stored.
   */
  releaseOrphanedHolds(now: string, isOwnerDead: (owner: string) => boolean): Promise<ReceiptRecord[]>;
  /**
   * Optional: from now on, holds placed in a balance lease are recorded in `journal` (one write,
   * awaited) rather than in the database before the provider is called, and recovery, listHolds
   * and accountSummary read it too. Every process of one database must be given the same journal.
   * A backend without leases (SQLite: one process) leaves this out.
   */
  useHoldJournal?(journal: HoldJournal): void;
  listHolds(accountId: string): Promise<HoldRecord[]>;
  accountSummary(accountId: string, month: string): Promise<AccountSummary>;
  /** Charges and holds of a key on a UTC day. */
  keyDaySpend(keyId: string, day: string): Promise<{ chargedNano: number; heldNano: number }>;
  /** Null removes the budget. Written to the audit log. */
  setMonthlyBudget(accountId: string, nano: number | null, actor: string): Promise<void>;
  /** Balance in nano-USD (funds added minus charges). */
  getBalance(accountId: string): Promise<number>;
  /** Adds funds and the audit entry in one transaction; returns the new balance. */
  addFunds(accountId: string, nano: number, actor: string, note?: string): Promise<number>;
  /** Sums of the ledger by kind, nano-USD; `funds - charges` always equals the balance. */
  ledgerTotals(accountId: string): Promise<{ funds: number; charges: number }>;
  /** Funds added, newest first; `beforeId` continues a page. */
  listFunds(accountId: string, options: { limit: number; beforeId?: number }): Promise<FundsEntry[]>;
}
