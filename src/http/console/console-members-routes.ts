import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { GatewayDeps } from '../gateway-deps.ts';
import { requireOwner, signedIn } from './console-guard.ts';
import { address, displayAddress, parseWith, renderMember } from './console-json.ts';

/** Members of the workspace: everyone may list them; the owner alone adds and removes. */
export function registerMembersRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  app.get('/members', async (request) => ({
    object: 'list',
    data: (await deps.store.listMembers(signedIn(request).session.accountId)).map(renderMember),
  }));

  app.post('/members', async (request) => {
    const owner = requireOwner(request);
    const body = parseWith(z.object({ address }).strict(), request.body);
    const member = await deps.store.addMember(
      owner.session.accountId,
      body.address,
      displayAddress(owner.member.address),
      new Date(deps.now()).toISOString(),
    );
    return renderMember(member);
  });

  app.delete('/members/:address', async (request) => {
    const owner = requireOwner(request);
    const target = parseWith(address, (request.params as { address: string }).address);
    if (target === owner.member.address) throw new GatewayError('invalid_request', 'The owner cannot remove itself.', {}, 'address');
    const removed = await deps.store.removeMember(
      owner.session.accountId,
      target,
      displayAddress(owner.member.address),
      new Date(deps.now()).toISOString(),
    );
    if (!removed) throw new GatewayError('not_found', `${displayAddress(target)} is not a member.`);
    return { removed: displayAddress(target) };
  });
}
