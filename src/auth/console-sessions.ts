import { createHash, randomBytes } from 'node:crypto';
import { GatewayError } from '../errors/gateway-error.ts';
import { newSuffix } from '../lib/ids.ts';
import type { MemberRecord, SessionRecord } from '../storage/records.ts';
import type { ConsoleStore } from '../storage/console-store.ts';

export const SESSION_COOKIE = 'svc_session';
export const SESSION_TTL_MS = 7 * 24 * 60 * 60_000;

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The value of one cookie in a Cookie header, or null. */
export function cookieValue(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const separator = part.indexOf('=');
    if (separator > 0 && part.slice(0, separator).trim() === name) return part.slice(separator + 1).trim();
  }
  return null;
}

/** The CSRF token of a session: derived from its cookie token, which scripts cannot read (httpOnly). */
export function csrfTokenOf(token: string): string {
  return createHash('sha256').update(`csrf:${token}`).digest('base64url');
}

export interface SignedIn {
  session: SessionRecord;
  member: MemberRecord;
  /** The cookie token itself, to derive the CSRF token and to end the session. */
  token: string;
}

/**
 * Console sessions: a random 256-bit token in an httpOnly cookie, of which only the SHA-256 is
 * stored. Every request reads the session and the membership from the store, so a sign-out or a
 * removed member takes effect at once on every process.
 */
export class ConsoleSessions {
  constructor(
    private readonly store: ConsoleStore,
    private readonly now: () => number = Date.now,
  ) {}

  async start(member: MemberRecord): Promise<{ token: string; session: SessionRecord }> {
    const token = randomBytes(32).toString('base64url');
    const now = this.now();
    const session: SessionRecord = {
      id: `sess_${newSuffix(now)}`,
      tokenHash: sha256(token),
      accountId: member.accountId,
      address: member.address,
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + SESSION_TTL_MS).toISOString(),
      endedAt: null,
    };
    await this.store.insertSession(session);
    return { token, session };
  }

  /** The signed-in member of a Cookie header; session_required when there is none that is valid. */
  async authenticate(cookieHeader: string | undefined): Promise<SignedIn> {
    const token = cookieValue(cookieHeader, SESSION_COOKIE);
    if (!token) throw new GatewayError('session_required', 'Sign in to the console first.');
    const session = await this.store.findSession(sha256(token));
    if (!session || session.endedAt) throw new GatewayError('session_required', 'This console session has ended; sign in again.');
    if (Date.parse(session.expiresAt) <= this.now()) throw new GatewayError('session_required', 'This console session expired; sign in again.');
    const member = (await this.store.listMembers(session.accountId)).find((entry) => entry.address === session.address);
    if (!member) throw new GatewayError('session_required', 'This wallet is no longer a member of the workspace.');
    return { session, member, token };
  }

  async end(token: string): Promise<void> {
    await this.store.endSession(sha256(token), new Date(this.now()).toISOString());
  }
}
