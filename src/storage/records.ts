/**
 * The records the store keeps, declared here so that storage, the lowest layer, imports no layer
 * above it (routing, protocol, http). Where a record holds a value another layer defines (a
 * routing attempt, the canonical usage), it is declared by the shape the store keeps, which that
 * layer's type fits structurally: `Attempt` (routing/attempt.ts) is a `StoredAttempt` whose code
 * is a catalog `ErrorCode`; `Usage` (canonical/chat-result.ts) is a `StoredUsage`.
 */

export type Scope = 'inference' | 'fix';

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  name: string;
  /** Display prefix, e.g. "svc_Ab12Cd34". */
  prefix: string;
  /** Hex SHA-256 of the full key. The key itself is never stored. */
  hash: string;
  scopes: Scope[];
  /** Allowed model strings (aliases or exact ids); null allows every model. */
  models: string[] | null;
  dailyLimitNano: number | null;
  /** Requests per minute; null uses the configured default. */
  rateLimitPerMinute: number | null;
  /** ISO 8601 instants. */
  expiresAt: string | null;
  revokedAt: string | null;
  createdAt: string;
  lastUsedAt: string | null;
}

export type ReceiptStatus = 'succeeded' | 'failed' | 'cancelled';

/** A routing attempt as a receipt keeps it (JSON); its error code is text here. */
export interface StoredAttempt {
  model: string;
  outcome: 'succeeded' | 'failed' | 'skipped' | 'cancelled';
  errorCode?: string;
  detail?: string;
  retryAfterSeconds?: number;
  latencyMs: number;
  step?: number;
  costNano?: number;
}

/** Token counts as a receipt keeps them (JSON), the fields of the canonical usage. */
export type StoredUsage = Record<'inputTokens' | 'cachedInputTokens' | 'cacheWriteTokens' | 'outputTokens' | 'reasoningTokens', number>;

export interface AppliedPrices {
  inputNanoPerMillion: number;
  cachedInputNanoPerMillion: number;
  cacheWriteNanoPerMillion: number;
  outputNanoPerMillion: number;
}

export interface ReceiptRecord {
  id: string;
  requestId: string;
  accountId: string;
  keyId: string;
  keyPrefix: string;
  /**
   * ISO 8601. Written: when the request started (milliseconds). Read back: with nine fractional
   * digits, unique within the account and in its receipts' order; receipts of one millisecond
   * differ in the digits past it (receipt-order.ts).
   */
  createdAt: string;
  status: ReceiptStatus;
  endpoint: string;
  stream: boolean;
  requestedModel: string | null;
  answeringModel: string | null;
  attempts: StoredAttempt[];
  /** Client settings a provider could not honour (e.g. a field with no equivalent in its format), dropped. */
  warnings: string[];
  usage: StoredUsage | null;
  /** True when usage was estimated by the gateway because the provider never reported it. */
  usageEstimated: boolean;
  prices: AppliedPrices | null;
  /** Worst-case cost held for the request, nano-USD. */
  holdNano: number;
  /** Actual cost charged, nano-USD. */
  costNano: number;
  latencyMs: number;
  timeToFirstTokenMs: number | null;
  errorCode: string | null;
}

export interface AuditEntry {
  id: number;
  accountId: string;
  at: string;
  actor: string;
  action: string;
  detail: Record<string, unknown>;
}

/** Worst-case money reserved for one request in flight. Shares its id with the receipt. */
export interface HoldRecord {
  id: string;
  requestId: string;
  accountId: string;
  keyId: string;
  keyPrefix: string;
  endpoint: string;
  stream: boolean;
  requestedModel: string | null;
  amountNano: number;
  /** UTC day (2026-11-21) and month (2026-11) the request counts against. */
  day: string;
  month: string;
  createdAt: string;
  /** The gateway process that placed it (`host/pid/random`). */
  owner: string;
  /** Past this instant, with no heartbeat from its owner, the hold is released. */
  expiresAt: string;
  /**
   * What the request is charged when its process dies before settling (0 when absent): the
   * prompt's estimated input at the first candidate's price (orphan-receipt.ts).
   */
  estimatedCostNano?: number;
}

export type HoldRefusal = 'insufficient_balance' | 'daily_limit' | 'monthly_budget';

export type HoldDecision =
  | { placed: true }
  /** `remainingNano`: what was left under the limit that refused (may be negative). */
  | { placed: false; reason: HoldRefusal; remainingNano: number };

export interface AccountSummary {
  balanceNano: number;
  heldNano: number;
  holdCount: number;
  month: string;
  monthChargedNano: number;
  monthHeldNano: number;
  monthlyBudgetNano: number | null;
}

/** The three quality tiers a fix agent runs on; each is served by the alias `svc/<tier>`. */
export type FixTier = 'fast' | 'balanced' | 'best';

/** A priced, unexpired offer to run a fix agent on one input. Holds nothing; runs at most once. */
export interface FixQuoteRecord {
  /** `quote_<suffix>`. */
  id: string;
  accountId: string;
  /** The key that asked for it; only the same account may run it. */
  keyId: string;
  agent: string;
  tier: FixTier;
  /** The agent's input as the client sent it (validated), kept for the run. */
  input: Record<string, unknown>;
  /** cl100k tokens of the prompt the first step sends. */
  inputTokens: number;
  estimatedCostNano: number;
  /** Held when the quote runs; the run never charges more. */
  maxCostNano: number;
  /** Model calls the run may make. */
  stepBudget: number;
  /** ISO 8601 instants. */
  createdAt: string;
  expiresAt: string;
}

export type FixRunStatus = 'running' | 'succeeded' | 'failed' | 'cost_cap_reached' | 'cancelled';

/** One execution of a quote. Its hold and receipt share the id `receiptId`. */
export interface FixRunRecord {
  /** `run_<suffix>`, the suffix of its request and receipt ids. */
  id: string;
  quoteId: string;
  accountId: string;
  keyId: string;
  receiptId: string;
  agent: string;
  tier: FixTier;
  maxCostNano: number;
  status: FixRunStatus;
  createdAt: string;
  finishedAt: string | null;
  /** What the run produced (patch, files, explanation, cost, error), set when it ends; opaque to the store. */
  result: Record<string, unknown> | null;
  /** Someone asked to stop it; the process running it stops before its next step. */
  cancelRequested: boolean;
}

/** A step starting or ending, or the run ending: kept so any process can replay a run's progress. */
export interface FixRunEvent {
  runId: string;
  /** 1, 2, 3... per run. */
  sequence: number;
  at: string;
  type: string;
  data: Record<string, unknown>;
}

export type FixRunStart =
  | { started: true }
  /** The quote already ran (or is running): nothing was written. */
  | { started: false; existing: FixRunRecord }
  /** The hold did not fit: nothing was written. */
  | { started: false; refused: Extract<HoldDecision, { placed: false }> };

/** The workspace's owner (the first address that signed in) or a member the owner added. */
export type MemberRole = 'owner' | 'member';

export interface MemberRecord {
  accountId: string;
  /** Lower-case 0x address: addresses compare case-insensitively. */
  address: string;
  role: MemberRole;
  addedAt: string;
  /** Who added it: an address, `cli`, or `sign-in` for the owner who claimed the workspace. */
  addedBy: string;
}

/** A console session; only the SHA-256 of its cookie token is stored. */
export interface SessionRecord {
  id: string;
  /** Hex SHA-256 of the cookie token. */
  tokenHash: string;
  accountId: string;
  /** Lower-case address of the wallet that signed in. */
  address: string;
  createdAt: string;
  expiresAt: string;
  endedAt: string | null;
}

/** A sign-in nonce kept in the database (when there is no Redis): single use, 10 minutes. */
export interface SignInNonceRecord {
  nonce: string;
  /** Lower-case address the message was built for. */
  address: string;
  createdAt: string;
  expiresAt: string;
}

/** The ordered candidates and default reasoning level behind one alias, set in the console. */
export interface AliasRule {
  alias: string;
  candidates: string[];
  reasoning: 'low' | 'medium' | 'xhigh';
  updatedAt: string;
  updatedBy: string;
}

/** Funds added to the account (charges are the receipts). */
export interface FundsEntry {
  id: number;
  at: string;
  amountNano: number;
  note: string | null;
}

/** Receipt search of the console; every field optional, all ANDed. */
export interface ReceiptFilter {
  keyId?: string;
  /** Matches the requested or the answering model. */
  model?: string;
  /** Matches the model or alias the client asked for. */
  requestedModel?: string;
  status?: ReceiptStatus;
  errorCode?: string;
  endpoint?: string;
  /** ISO instants: created_at >= from, < to. */
  from?: string;
  to?: string;
}

/** Where a page of newest-first receipts continues: strictly older than this createdAt, as a receipt read back has it. */
export interface ReceiptCursor {
  createdAt: string;
}

/** Spend in one hour or day (UTC), from receipts. */
export interface SpendBucket {
  /** ISO instant of the bucket's start. */
  start: string;
  costNano: number;
  requests: number;
  errors: number;
}

/**
 * One group's usage in one UTC hour or day: the receipts' figures (requests, errors, tokens,
 * cost, summing to the receipts exactly) and the failed provider calls, which for a model
 * include those where it was a fallback candidate that failed before another answered.
 */
export interface UsageSeriesRow extends UsageRow {
  /** ISO instant of the bucket's start. */
  start: string;
  failedAttempts: number;
}

/** Requests, errors, tokens and cost of one model (answering, else requested), one key or one UTC day. */
export interface UsageRow {
  /** Model id, key id, or UTC day (2026-11-21). */
  name: string;
  requests: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
  costNano: number;
}
