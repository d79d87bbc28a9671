import type {
  AccountSummary,
  AliasRule,
  ApiKeyRecord,
  AuditEntry,
  FundsEntry,
  MemberRecord,
  ReceiptCursor,
  ReceiptFilter,
  SessionRecord,
  SignInNonceRecord,
  SpendBucket,
  UsageRow,
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

/**
 * Storage port. Every backend (SQLite now, PostgreSQL later) implements it and passes the
 * one contract suite in store-contract.ts. All methods are async so either backend fits.
 */
export interface Store {
  migrate(): Promise<void>;

  /** Inserts the key and, when `actor` is given, the audit entry `key.created` in the same transaction. */
  insertKey(key: ApiKeyRecord, actor?: string): Promise<void>;
  /**
   * Change a key's daily limit and/or rate limit (a field absent is left as it is; null removes
   * it) and write the audit entry `key.limits`, in one transaction. Null when no such key.
   */
  updateKeyLimits(
    accountId: string,
    keyId: string,
    changes: { dailyLimitNano?: number | null; rateLimitPerMinute?: number | null },
    actor: string,
    at: string,
  ): Promise<ApiKeyRecord | null>;
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
  getReceipt(accountId: string, id: string): Promise<ReceiptRecord | null>;
  /**
   * Newest first by createdAt, each receipt's own (unique within the account); `before` is an
   * ISO instant with up to nine fractional digits, exclusive: the createdAt of a page's last
   * receipt continues with the next one, ties impossible.
   */
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
  finishFixRun(
    runId: string,
    status: Exclude<FixRunStatus, 'running'>,
    result: Record<string, unknown>,
    finishedAt: string,
    receipt: ReceiptRecord,
  ): Promise<boolean>;
  /** Mark a running run of the account for cancellation; returns the run (null when not on the account). */
  requestFixRunCancel(accountId: string, id: string): Promise<FixRunRecord | null>;

  /** Newest first as listReceipts, for the console: `cursor` continues strictly older, `filter` ANDs its fields. */
  searchReceipts(accountId: string, options: { limit: number; cursor?: ReceiptCursor; filter?: ReceiptFilter }): Promise<ReceiptPage>;
  /** Cost, requests and failed requests per UTC hour or day with created_at in [from, to), oldest first; empty buckets left out. */
  spendSeries(accountId: string, options: { from: string; to: string; bucket: 'hour' | 'day' }): Promise<SpendBucket[]>;
  /** Per answering model (else the requested one) or per key id, over [from, to); most requests first. */
  usageBy(accountId: string, options: { from: string; to: string; by: 'model' | 'key' }): Promise<UsageRow[]>;
  /** Funds added, newest first; `beforeId` continues a page. */
  listFunds(accountId: string, options: { limit: number; beforeId?: number }): Promise<FundsEntry[]>;

  /**
   * Sign-in: atomically, when the account has no owner yet, `address` becomes its owner (two
   * first sign-ins racing: one owner); otherwise its membership, or null when it is not a member.
   * A new owner is audit-logged (`member.owner`).
   */
  claimMembership(accountId: string, address: string, at: string): Promise<MemberRecord | null>;
  /** Owner first, then members by when they were added. */
  listMembers(accountId: string): Promise<MemberRecord[]>;
  /** Adds a member (audit `member.added`); an existing one is returned unchanged. */
  addMember(accountId: string, address: string, actor: string, at: string): Promise<MemberRecord>;
  /** Removes a member (never the owner) and ends its sessions (audit `member.removed`); false when not a member. */
  removeMember(accountId: string, address: string, actor: string, at: string): Promise<boolean>;

  insertSession(session: SessionRecord): Promise<void>;
  /** The session with this token hash, ended or not (the caller checks endedAt and expiresAt). */
  findSession(tokenHash: string): Promise<SessionRecord | null>;
  endSession(tokenHash: string, at: string): Promise<void>;
  /** Ends every open session of an address ("sign out everywhere"); returns how many. */
  endSessionsOf(accountId: string, address: string, at: string): Promise<number>;

  insertSignInNonce(nonce: SignInNonceRecord): Promise<void>;
  /** Deletes and returns the nonce when it exists and `now` is before its expiry; two consumers racing: one gets it. */
  consumeSignInNonce(nonce: string, now: string): Promise<SignInNonceRecord | null>;

  /** The rules set in the console, one per alias that has one. */
  listAliasRules(accountId: string): Promise<AliasRule[]>;
  /** Replaces one alias's rule and writes the audit entry `rules.set`, in one transaction. */
  setAliasRule(accountId: string, rule: AliasRule): Promise<void>;

  appendAudit(entry: Omit<AuditEntry, 'id'>): Promise<void>;
  /** Newest first; `beforeId` continues a page. */
  listAudit(accountId: string, limit: number, beforeId?: number): Promise<AuditEntry[]>;

  close(): Promise<void>;
}
