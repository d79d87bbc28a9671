import type { FastifyInstance } from 'fastify';
import type { Balance } from './account-schema.ts';
import { renderAccountSummary } from './render-account-summary.ts';
import type { GatewayDeps } from './gateway-deps.ts';
import { authenticatedKey } from './request-context.ts';

/** GET /v1/balance: the account's money as the key's owner sees it, USD as decimal strings. */
export function registerBalanceRoute(app: FastifyInstance, deps: GatewayDeps): void {
  app.get('/balance', async (request): Promise<Balance> => {
    const key = authenticatedKey(request);
    const month = new Date().toISOString().slice(0, 7);
    const summary = await deps.store.accountSummary(key.accountId, month);
    return { object: 'balance', currency: 'USD', ...renderAccountSummary(summary) };
  });
}
