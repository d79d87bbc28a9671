import type { AliasRule, SessionRecord, SignInNonceRecord } from '../storage/records.ts';
import { DEFAULT_ACCOUNT_ID } from '../storage/store.ts';

/** Addresses, sessions, nonces and rules the console contract suites share. */
export const DAY = '2026-11-21';
export const OWNER = '0xaaaa000000000000000000000000000000000001';
export const MEMBER = '0xbbbb000000000000000000000000000000000002';
export const STRANGER = '0xcccc000000000000000000000000000000000003';

/** A racing first sign-in's address, number `index`. */
export function racingAddress(index: number): string {
  return `0x${index.toString(16).padStart(40, '0')}`;
}

export function sampleSession(overrides: Partial<SessionRecord> = {}): SessionRecord {
  const id = overrides.id ?? 'sess_1';
  return {
    id,
    tokenHash: `hash-of-${id}`,
    accountId: DEFAULT_ACCOUNT_ID,
    address: MEMBER,
    createdAt: `${DAY}T10:00:00.000Z`,
    expiresAt: `${DAY}T22:00:00.000Z`,
    endedAt: null,
    ...overrides,
  };
}

export function sampleNonce(overrides: Partial<SignInNonceRecord> = {}): SignInNonceRecord {
  return { nonce: 'nonce_1', address: OWNER, createdAt: `${DAY}T10:00:00.000Z`, expiresAt: `${DAY}T10:10:00.000Z`, ...overrides };
}

export function rule(overrides: Partial<AliasRule> = {}): AliasRule {
  return {
    alias: 'svc/fast',
    candidates: ['sim/swift-mini', 'sim/steady'],
    reasoning: 'low',
    updatedAt: `${DAY}T10:00:00.000Z`,
    updatedBy: OWNER,
    ...overrides,
  };
}
