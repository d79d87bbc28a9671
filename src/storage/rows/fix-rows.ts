import type { FixQuoteRecord, FixRunEvent, FixRunRecord, FixRunStatus, FixTier } from '../records.ts';

/** Fix quotes, runs and run events: records <-> rows (see row-mapping.ts). */
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

export function fixQuoteToRow(quote: FixQuoteRecord): FixQuoteRow {
  return {
    id: quote.id,
    account_id: quote.accountId,
    key_id: quote.keyId,
    agent: quote.agent,
    tier: quote.tier,
    input: quote.input,
    input_tokens: quote.inputTokens,
    estimated_cost_nano: quote.estimatedCostNano,
    max_cost_nano: quote.maxCostNano,
    step_budget: quote.stepBudget,
    created_at: quote.createdAt,
    expires_at: quote.expiresAt,
  };
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

export function fixRunToRow(run: FixRunRecord): FixRunRow {
  return {
    id: run.id,
    quote_id: run.quoteId,
    account_id: run.accountId,
    key_id: run.keyId,
    receipt_id: run.receiptId,
    agent: run.agent,
    tier: run.tier,
    max_cost_nano: run.maxCostNano,
    status: run.status,
    created_at: run.createdAt,
    finished_at: run.finishedAt,
    result: run.result,
    cancel_requested: run.cancelRequested,
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

export function fixRunEventToRow(event: FixRunEvent): FixRunEventRow {
  return { run_id: event.runId, sequence: event.sequence, at: event.at, type: event.type, data: event.data };
}

export function fixRunEventFromRow(row: FixRunEventRow): FixRunEvent {
  return { runId: row.run_id, sequence: row.sequence, at: row.at, type: row.type, data: row.data };
}
