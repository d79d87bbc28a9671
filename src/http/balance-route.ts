import type { FastifyInstance } from 'fastify';
import { formatUsd } from '../lib/money.ts';
import type { GatewayDeps } from './gateway-deps.ts';
import { authenticatedKey } from './request-context.ts';

/** GET /v1/balance: the account's money as the key's owner sees it, USD as decimal strings. */
export function registerBalanceRoute(app: FastifyInstance, deps: GatewayDeps): void {
  app.get('/v1/balance', async (request) => {
    const key = authenticatedKey(request);
    const month = new Date().toISOString().slice(0, 7);
    const summary = await deps.store.accountSummary(key.accountId, month);
    const monthUsed = summary.monthChargedNano + summary.monthHeldNano;
    return {
      object: 'balance',
      currency: 'USD',
      balance: formatUsd(summary.balanceNano),
      available: formatUsd(summary.balanceNano - summary.heldNano),
      holds: { count: summary.holdCount, total: formatUsd(summary.heldNano) },
      month: {
        period: month,
        spend: formatUsd(summary.monthChargedNano),
        held: formatUsd(summary.monthHeldNano),
        budget: summary.monthlyBudgetNano === null ? null : formatUsd(summary.monthlyBudgetNano),
        remaining: summary.monthlyBudgetNano === null ? null : formatUsd(Math.max(0, summary.monthlyBudgetNano - monthUsed)),
      },
    };
  });
}
