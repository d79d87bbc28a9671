import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { csrfTokenOf, type SignedIn } from '../../auth/console-sessions.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { GatewayDeps } from '../gateway-deps.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in member on console routes. */
    signedIn: SignedIn | null;
  }
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Headers of every console response: never framed (clickjacking), never cached, never sniffed. */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'x-frame-options': 'DENY',
  'content-security-policy': "frame-ancestors 'none'",
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
};

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Every console API request: API keys are refused (keys never grant console access), a
 * state-changing call must come from the console's own origin, and, except to sign in, the
 * session cookie must be valid and a state-changing call must carry the session's CSRF token.
 */
export async function guardConsole(deps: GatewayDeps, request: FastifyRequest, reply: FastifyReply, signIn: boolean): Promise<void> {
  reply.headers(CONSOLE_HEADERS);
  if (request.headers.authorization !== undefined || request.headers['x-api-key'] !== undefined) {
    throw new GatewayError('session_required', 'API keys never grant console access: sign in with a wallet (and send no Authorization header).');
  }
  const changes = STATE_CHANGING.has(request.method);
  if (changes && request.headers.origin !== deps.console.origin) {
    throw new GatewayError('csrf_failed', `Console changes are accepted only from ${deps.console.origin}.`);
  }
  if (signIn) return;
  request.signedIn = await deps.console.sessions.authenticate(request.headers.cookie);
  if (!changes) return;
  const token = request.headers['x-csrf-token'];
  if (typeof token !== 'string' || !sameSecret(token, csrfTokenOf(request.signedIn.token))) {
    throw new GatewayError('csrf_failed', 'This change needs the x-csrf-token header of the session (GET /console/api/session gives it).');
  }
}

export function signedIn(request: FastifyRequest): SignedIn {
  return request.signedIn!;
}

/** The owner alone manages members. */
export function requireOwner(request: FastifyRequest): SignedIn {
  const user = signedIn(request);
  if (user.member.role !== 'owner') throw new GatewayError('owner_only', 'Only the owner of the workspace can do this.');
  return user;
}
