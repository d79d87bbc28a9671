import type { AccountSummary, ApiKeyRecord, AuditEntry, HoldDecision, HoldRecord, ReceiptRecord } from './records.ts';

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
   * one's receipt as failed with cost 0. Returns the receipts written.
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

  appendAudit(entry: Omit<AuditEntry, 'id'>): Promise<void>;
  listAudit(accountId: string, limit: number): Promise<AuditEntry[]>;

  close(): Promise<void>;
}
