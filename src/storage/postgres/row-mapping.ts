import type { Usage } from '../../protocol/canonical/chat-result.ts';
import type {
  AliasRule,
  ApiKeyRecord,
  AppliedPrices,
  StoredAttempt,
  AuditEntry,
  FixQuoteRecord,
  FixRunEvent,
  FixRunRecord,
  FixRunStatus,
  FixTier,
  FundsEntry,
  HoldRecord,
  MemberRecord,
  MemberRole,
  ReceiptRecord,
  ReceiptStatus,
  Scope,
  SessionRecord,
  SignInNonceRecord,
  UsageRow,
} from '../records.ts';

/**
 * Column values as pg hands them to us with the adapter's type parsers (postgres-pool.ts):
 * BIGINT as a safe integer, timestamptz as an ISO string, jsonb parsed, text[] as an array.
 */
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
  created_at: string;
  status: string;
  endpoint: string;
  stream: boolean;
  requested_model: string | null;
  answering_model: string | null;
  attempts: StoredAttempt[];
  warnings: string[];
  usage: Usage | null;
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
}

export interface AuditRow {
  id: number;
  account_id: string;
  at: string;
  actor: string;
  action: string;
  detail: Record<string, unknown>;
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

export function receiptFromRow(row: ReceiptRow): ReceiptRecord {
  return {
    id: row.id,
    requestId: row.request_id,
    accountId: row.account_id,
    keyId: row.key_id,
    keyPrefix: row.key_prefix,
    createdAt: row.created_at,
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
  };
}

export function auditFromRow(row: AuditRow): AuditEntry {
  return { id: row.id, accountId: row.account_id, at: row.at, actor: row.actor, action: row.action, detail: row.detail };
}

export interface FixQuoteRow {
  id: string;
  account_id: string;
  key_id: string;
  agent: string;
  tier: string;
  input: Record<string, unknown>;
  input_tokens: number;
  estimated_cost_nano: number;
  max_cost_nano: number;
  step_budget: number;
  created_at: string;
  expires_at: string;
}

export interface FixRunRow {
  id: string;
  quote_id: string;
  account_id: string;
  key_id: string;
  receipt_id: string;
  agent: string;
  tier: string;
  max_cost_nano: number;
  status: string;
  created_at: string;
  finished_at: string | null;
  result: Record<string, unknown> | null;
  cancel_requested: boolean;
}

export interface FixRunEventRow {
  run_id: string;
  sequence: number;
  at: string;
  type: string;
  data: Record<string, unknown>;
}

export function fixQuoteFromRow(row: FixQuoteRow): FixQuoteRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    keyId: row.key_id,
    agent: row.agent,
    tier: row.tier as FixTier,
    input: row.input,
    inputTokens: row.input_tokens,
    estimatedCostNano: row.estimated_cost_nano,
    maxCostNano: row.max_cost_nano,
    stepBudget: row.step_budget,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

export function fixRunFromRow(row: FixRunRow): FixRunRecord {
  return {
    id: row.id,
    quoteId: row.quote_id,
    accountId: row.account_id,
    keyId: row.key_id,
    receiptId: row.receipt_id,
    agent: row.agent,
    tier: row.tier as FixTier,
    maxCostNano: row.max_cost_nano,
    status: row.status as FixRunStatus,
    createdAt: row.created_at,
    finishedAt: row.finished_at,
    result: row.result,
    cancelRequested: row.cancel_requested,
  };
}

export function fixRunEventFromRow(row: FixRunEventRow): FixRunEvent {
  return { runId: row.run_id, sequence: row.sequence, at: row.at, type: row.type, data: row.data };
}

// jsonb refuses the NUL character that SQLite's TEXT keeps; a provider's error text may hold one.
function withoutNul(_key: string, value: unknown): unknown {
  return typeof value === 'string' && value.includes('\0') ? value.replaceAll('\0', '\uFFFD') : value;
}

/** JSON for a jsonb parameter: pg would turn a JS array into a PostgreSQL array, not JSON. */
export function jsonParameter(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value, withoutNul);
}

export interface MemberRow {
  account_id: string;
  address: string;
  role: string;
  added_at: string;
  added_by: string;
}

export interface SessionRow {
  id: string;
  token_hash: string;
  account_id: string;
  address: string;
  created_at: string;
  expires_at: string;
  ended_at: string | null;
}

export interface SignInNonceRow {
  nonce: string;
  address: string;
  created_at: string;
  expires_at: string;
}

export interface AliasRuleRow {
  alias: string;
  candidates: string[];
  reasoning: string;
  updated_at: string;
  updated_by: string;
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

export function memberFromRow(row: MemberRow): MemberRecord {
  return { accountId: row.account_id, address: row.address, role: row.role as MemberRole, addedAt: row.added_at, addedBy: row.added_by };
}

export function sessionFromRow(row: SessionRow): SessionRecord {
  return {
    id: row.id,
    tokenHash: row.token_hash,
    accountId: row.account_id,
    address: row.address,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    endedAt: row.ended_at,
  };
}

export function signInNonceFromRow(row: SignInNonceRow): SignInNonceRecord {
  return { nonce: row.nonce, address: row.address, createdAt: row.created_at, expiresAt: row.expires_at };
}

export function aliasRuleFromRow(row: AliasRuleRow): AliasRule {
  return {
    alias: row.alias,
    candidates: row.candidates,
    reasoning: row.reasoning as AliasRule['reasoning'],
    updatedAt: row.updated_at,
    updatedBy: row.updated_by,
  };
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
