import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../errors/gateway-error.ts';
import { parseInstantNanos } from '../lib/instant-nanos.ts';
import type { GatewayDeps } from './gateway-deps.ts';
import { authenticatedKey } from './request-context.ts';
import { renderReceipt } from './render-receipt.ts';

const DEFAULT_LIMIT = 20;

function parseLimit(value: unknown): number {
  if (value === undefined) return DEFAULT_LIMIT;
  const limit = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(limit >= 1 && limit <= 100)) throw new GatewayError('invalid_request', 'limit must be an integer from 1 to 100');
  return limit;
}

/** Exclusive; a receipt's created_at as returned (nine fractional digits) continues after that receipt exactly. */
function parseBefore(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && parseInstantNanos(value) !== null) return value;
  throw new GatewayError('invalid_request', "before must be an ISO 8601 timestamp (at most 9 fractional digits), such as a receipt's created_at");
}

export function registerReceiptsRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  app.get('/v1/receipts', async (request) => {
    const query = request.query as Record<string, unknown>;
    const key = authenticatedKey(request);
    const page = await deps.store.listReceipts(key.accountId, { limit: parseLimit(query.limit), before: parseBefore(query.before) });
    return { object: 'list', data: page.data.map(renderReceipt), has_more: page.hasMore };
  });

  app.get('/v1/receipts/:id', async (request) => {
    const { id } = request.params as { id: string };
    const receipt = await deps.store.getReceipt(authenticatedKey(request).accountId, id);
    if (!receipt) throw new GatewayError('not_found', `No receipt ${id} on this account.`);
    return renderReceipt(receipt);
  });
}
