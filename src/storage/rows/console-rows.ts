import type { AliasRule, MemberRecord, MemberRole, SessionRecord, SignInNonceRecord, SpendBucket } from '../records.ts';

/** Members, sessions, sign-in nonces and alias rules: records <-> rows (see row-mapping.ts). */
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

/** The account is the query's own parameter; a row read back need not carry it. */
export interface AliasRuleRow {
  alias: string;
  candidates: string[];
  reasoning: string;
  updated_at: string;
  updated_by: string;
}

/** Totals of one model or key over a range, as the usage queries of both backends name them. */
export function memberFromRow(row: MemberRow): MemberRecord {
  return { accountId: row.account_id, address: row.address, role: row.role as MemberRole, addedAt: row.added_at, addedBy: row.added_by };
}

/** Addresses are stored lower-case: they compare case-insensitively. */
export function sessionToRow(session: SessionRecord): SessionRow {
  return {
    id: session.id,
    token_hash: session.tokenHash,
    account_id: session.accountId,
    address: session.address.toLowerCase(),
    created_at: session.createdAt,
    expires_at: session.expiresAt,
    ended_at: session.endedAt,
  };
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

export function signInNonceToRow(nonce: SignInNonceRecord): SignInNonceRow {
  return { nonce: nonce.nonce, address: nonce.address.toLowerCase(), created_at: nonce.createdAt, expires_at: nonce.expiresAt };
}

export function signInNonceFromRow(row: SignInNonceRow): SignInNonceRecord {
  return { nonce: row.nonce, address: row.address, createdAt: row.created_at, expiresAt: row.expires_at };
}

export function aliasRuleToRow(rule: AliasRule): AliasRuleRow {
  return { alias: rule.alias, candidates: rule.candidates, reasoning: rule.reasoning, updated_at: rule.updatedAt, updated_by: rule.updatedBy };
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

/** A bucket of spendSeries, as both backends' queries return it. */
export interface SpendRow {
  start: string;
  cost_nano: number;
  requests: number;
  errors: number;
}

export function spendFromRow(row: SpendRow): SpendBucket {
  return { start: row.start, costNano: row.cost_nano, requests: row.requests, errors: row.errors };
}
