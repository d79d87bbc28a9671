import type {
  ApiKeyRecord,
  AppliedPrices,
  AuditEntry,
  FundsEntry,
  HoldRecord,
  ReceiptRecord,
  ReceiptStatus,
  Scope,
  StoredAttempt,
  StoredUsage,
  UsageRow,
} from '../records.ts';
import { formatInstantNanos } from '../../lib/instant-nanos.ts';
import { formatUsd } from '../../lib/money.ts';
import { instantNanos } from '../receipt-order.ts';

/** Keys, receipts, holds, audit entries, funds and usage: records <-> rows (see row-mapping.ts). */
export interface ApiKeyRow {
  id: string;
  account_id: string;
  name: string;
  prefix: string;
  hash: string;
  scopes: string[];
  models: string[] | null;
  daily_limit_nano: number | null;
  rate_limit_per_minute: number | null;
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
  last_used_at: string | null;
}

export interface ReceiptRow {
  id: string;
  request_id: string;
  account_id: string;
  key_id: string;
  key_prefix: string;
  /** The instant as written (milliseconds): what spend buckets group by. */
  created_at: string;
  /**
   * Nanoseconds since the epoch as decimal text (beyond a safe JS integer), unique per account:
   * the receipt's place in its account's order and its `createdAt` at full precision
   * (receipt-order.ts). Written, it is the value asked for; the store takes the next free one.
   */
  created_ns: string;
  status: string;
  endpoint: string;
  stream: boolean;
  requested_model: string | null;
  answering_model: string | null;
  attempts: StoredAttempt[];
  warnings: string[];
  usage: StoredUsage | null;
  usage_estimated: boolean;
  prices: AppliedPrices | null;
  hold_nano: number;
  cost_nano: number;
  latency_ms: number;
  time_to_first_token_ms: number | null;
  error_code: string | null;
}

export interface HoldRow {
  id: string;
  request_id: string;
  account_id: string;
  key_id: string;
  key_prefix: string;
  endpoint: string;
  stream: boolean;
  requested_model: string | null;
  amount_nano: number;
  day: string;
  month: string;
  created_at: string;
  owner: string;
  expires_at: string;
  estimated_cost_nano: number;
}

export interface AuditRow {
  id: number;
  account_id: string;
  at: string;
  actor: string;
  action: string;
  detail: Record<string, unknown>;
}

export interface FundsRow {
  id: number;
  at: string;
  amount_nano: number;
  note: string | null;
}

export interface UsageSqlRow {
  name: string;
  requests: number;
  errors: number;
  input_tokens: number;
  output_tokens: number;
  cost_nano: number;
}

export function apiKeyToRow(key: ApiKeyRecord): ApiKeyRow {
  return {
    id: key.id,
    account_id: key.accountId,
    name: key.name,
    prefix: key.prefix,
    hash: key.hash,
    scopes: key.scopes,
    models: key.models,
    daily_limit_nano: key.dailyLimitNano,
    rate_limit_per_minute: key.rateLimitPerMinute,
    expires_at: key.expiresAt,
    revoked_at: key.revokedAt,
    created_at: key.createdAt,
    last_used_at: key.lastUsedAt,
  };
}

export function apiKeyFromRow(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    prefix: row.prefix,
    hash: row.hash,
    scopes: row.scopes as Scope[],
    models: row.models,
    dailyLimitNano: row.daily_limit_nano,
    rateLimitPerMinute: row.rate_limit_per_minute,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}

/*
 * Receipts and holds are mapped field by field, the request columns they share written out in each:
 * built with an object spread, these four mappings made the JSON request path a fifth dearer in CPU
 * (two builds loaded side by side on one core).
 */
export function receiptToRow(receipt: ReceiptRecord): ReceiptRow {
  return {
    id: receipt.id,
    request_id: receipt.requestId,
    account_id: receipt.accountId,
    key_id: receipt.keyId,
    key_prefix: receipt.keyPrefix,
    created_at: receipt.createdAt,
    created_ns: instantNanos(receipt.createdAt).toString(),
    status: receipt.status,
    endpoint: receipt.endpoint,
    stream: receipt.stream,
    requested_model: receipt.requestedModel,
    answering_model: receipt.answeringModel,
    attempts: receipt.attempts,
    warnings: receipt.warnings,
    usage: receipt.usage,
    usage_estimated: receipt.usageEstimated,
    prices: receipt.prices,
    hold_nano: receipt.holdNano,
    cost_nano: receipt.costNano,
    latency_ms: receipt.latencyMs,
    time_to_first_token_ms: receipt.timeToFirstTokenMs,
    error_code: receipt.errorCode,
  };
}

export function receiptFromRow(row: ReceiptRow): ReceiptRecord {
  return {
    id: row.id,
    requestId: row.request_id,
    accountId: row.account_id,
    keyId: row.key_id,
    keyPrefix: row.key_prefix,
    createdAt: formatInstantNanos(BigInt(row.created_ns)),
    status: row.status as ReceiptStatus,
    endpoint: row.endpoint,
    stream: row.stream,
    requestedModel: row.requested_model,
    answeringModel: row.answering_model,
    attempts: row.attempts,
    warnings: row.warnings,
    usage: row.usage,
    usageEstimated: row.usage_estimated,
    prices: row.prices,
    holdNano: row.hold_nano,
    costNano: row.cost_nano,
    latencyMs: row.latency_ms,
    timeToFirstTokenMs: row.time_to_first_token_ms,
    errorCode: row.error_code,
  };
}

export function holdToRow(hold: HoldRecord): HoldRow {
  return {
    id: hold.id,
    request_id: hold.requestId,
    account_id: hold.accountId,
    key_id: hold.keyId,
    key_prefix: hold.keyPrefix,
    endpoint: hold.endpoint,
    stream: hold.stream,
    requested_model: hold.requestedModel,
    amount_nano: hold.amountNano,
    day: hold.day,
    month: hold.month,
    created_at: hold.createdAt,
    owner: hold.owner,
    expires_at: hold.expiresAt,
    estimated_cost_nano: hold.estimatedCostNano ?? 0,
  };
}

export function holdFromRow(row: HoldRow): HoldRecord {
  return {
    id: row.id,
    requestId: row.request_id,
    accountId: row.account_id,
    keyId: row.key_id,
    keyPrefix: row.key_prefix,
    endpoint: row.endpoint,
    stream: row.stream,
    requestedModel: row.requested_model,
    amountNano: row.amount_nano,
    day: row.day,
    month: row.month,
    createdAt: row.created_at,
    owner: row.owner,
    expiresAt: row.expires_at,
    estimatedCostNano: row.estimated_cost_nano,
  };
}

export function auditFromRow(row: AuditRow): AuditEntry {
  return { id: row.id, accountId: row.account_id, at: row.at, actor: row.actor, action: row.action, detail: row.detail };
}

export function fundsFromRow(row: FundsRow): FundsEntry {
  return { id: row.id, at: row.at, amountNano: row.amount_nano, note: row.note };
}

export function usageFromRow(row: UsageSqlRow): UsageRow {
  return {
    name: row.name,
    requests: row.requests,
    errors: row.errors,
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    costNano: row.cost_nano,
  };
}

/** The detail of a `budget.set` audit entry: the budget set and the one it replaced (null: none). */
export function budgetChange(
  nano: number | null,
  before: number | null,
): { monthly_budget: string | null; before: { monthly_budget: string | null } } {
  return { monthly_budget: nano === null ? null : formatUsd(nano), before: { monthly_budget: before === null ? null : formatUsd(before) } };
}
