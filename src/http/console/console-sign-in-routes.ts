import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { csrfTokenOf, SESSION_COOKIE, SESSION_TTL_MS, type SignedIn } from '../../auth/console-sessions.ts';
import { SignInError } from '../../auth/siwe/sign-in-error.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { MemberRecord } from '../../storage/records.ts';
import { DEFAULT_ACCOUNT_ID } from '../../storage/store.ts';
import type { GatewayDeps } from '../gateway-deps.ts';
import { address, displayAddress, parseWith } from './console-json.ts';
import { signedIn } from './console-guard.ts';

const nonceRequest = z.object({ address, chain_id: z.number().int().positive().optional() }).strict();
const signInRequest = z.object({ message: z.string().min(1).max(4_000), signature: z.string().regex(/^0x[0-9a-fA-F]+$/, 'must be 0x hex') }).strict();

function sessionCookie(deps: GatewayDeps, token: string, maxAgeSeconds: number): string {
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${deps.console.secureCookie ? '; Secure' : ''}`;
}

function renderSession(user: SignedIn) {
  return {
    address: displayAddress(user.member.address),
    role: user.member.role,
    csrf_token: csrfTokenOf(user.token),
    expires_at: user.session.expiresAt,
  };
}

/**
 * The membership an address signs in with. With console.owner set, that address alone may
 * claim the workspace and any other must have been added; without it, the first address does.
 */
async function signInMember(deps: GatewayDeps, address: string, at: string): Promise<MemberRecord | null> {
  const owner = deps.config.console.owner;
  if (owner === undefined || owner === address) return deps.store.claimMembership(DEFAULT_ACCOUNT_ID, address, at);
  return (await deps.store.listMembers(DEFAULT_ACCOUNT_ID)).find((member) => member.address === address) ?? null;
}

function clearCookie(deps: GatewayDeps, reply: FastifyReply): void {
  reply.header('set-cookie', sessionCookie(deps, '', 0));
}

/** Nonce, sign-in, session, sign-out: the wallet sign-in of the contract (EIP-4361, ERC-1271). */
export function registerSignInRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  const signIn = { config: { signIn: true } };

  // What the login page needs before a wallet signs: the chains it may sign on (to offer a switch).
  app.get('/sign-in/options', signIn, async () => ({ chain_ids: deps.console.chainIds }));

  app.post('/sign-in/nonce', signIn, async (request) => {
    const body = parseWith(nonceRequest, request.body);
    const chainId = body.chain_id ?? deps.console.chainIds[0]!;
    if (!deps.console.chainIds.includes(chainId)) {
      throw new GatewayError(
        'invalid_request',
        `chain_id: sign-in is allowed on chain ${deps.console.chainIds.join(', ')}; switch the wallet to one of them.`,
        {},
        'chain_id',
      );
    }
    const issued = await deps.console.nonces.issue(body.address, deps.now());
    const { buildSignInMessage } = await import('../../auth/siwe/sign-in-message.ts');
    const message = buildSignInMessage({
      domain: deps.console.domain,
      origin: deps.console.origin,
      address: displayAddress(body.address),
      chainId,
      nonce: issued.nonce,
      issuedAt: issued.issuedAt,
    });
    return { nonce: issued.nonce, message, issued_at: issued.issuedAt.toISOString(), expires_at: issued.expiresAt.toISOString() };
  });

  app.post('/sign-in', signIn, async (request, reply) => {
    const body = parseWith(signInRequest, request.body);
    let verified;
    try {
      verified = await (await deps.console.verifier()).verify(body, (nonce) => deps.console.nonces.consume(nonce, deps.now()));
    } catch (error) {
      if (error instanceof SignInError) throw new GatewayError('sign_in_refused', error.message, {}, error.reason);
      throw error;
    }
    const at = new Date(deps.now()).toISOString();
    const lowerCase = verified.address.toLowerCase();
    const member = await signInMember(deps, lowerCase, at);
    if (!member) {
      throw new GatewayError('not_a_member', `The wallet ${verified.address} is not a member of this workspace. Ask its owner to add this address.`);
    }
    const { token, session } = await deps.console.sessions.start(member);
    await deps.store.appendAudit({
      accountId: DEFAULT_ACCOUNT_ID,
      at,
      actor: verified.address,
      action: 'session.signed_in',
      detail: { chainId: verified.chainId, role: member.role },
    });
    reply.header('set-cookie', sessionCookie(deps, token, SESSION_TTL_MS / 1000));
    return renderSession({ session, member, token });
  });

  app.get('/session', async (request) => renderSession(signedIn(request)));

  app.post('/sign-out', async (request, reply) => {
    await deps.console.sessions.end(signedIn(request).token);
    clearCookie(deps, reply);
    return { signed_out: true };
  });

  app.post('/sign-out-everywhere', async (request, reply) => {
    const user = signedIn(request);
    const ended = await deps.store.endSessionsOf(user.session.accountId, user.member.address, new Date(deps.now()).toISOString());
    clearCookie(deps, reply);
    return { signed_out: true, sessions_ended: ended };
  });
}
