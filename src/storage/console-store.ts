import type { AliasRule, AuditEntry, MemberRecord, SessionRecord, SignInNonceRecord } from './records.ts';

/** The console: members, sessions, sign-in nonces, alias rules and the audit log. */
export interface ConsoleStore {
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
  /**
   * Newest first; `beforeId` continues a page. `filter.actor` matches the actor in any case;
   * `filter.action` an action (`key.revoked`) or its kind (`key`).
   */
  listAudit(accountId: string, limit: number, beforeId?: number, filter?: AuditFilter): Promise<AuditEntry[]>;
}

export interface AuditFilter {
  actor?: string;
  action?: string;
}
