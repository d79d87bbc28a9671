import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../errors/gateway-error.ts';
import { parseInstantNanos } from '../lib/instant-nanos.ts';
import type { GatewayDeps } from './gateway-deps.ts';
import { authenticatedKey } from './request-context.ts';
import { renderReceipt } from './render-receipt.ts';
import { receiptsQuerySchema, type Receipt, type ReceiptList } from './receipt-schema.ts';

const DEFAULT_LIMIT = 20;

/** The query, or invalid_request naming the field as the contract's messages always have. */
function parseQuery(query: unknown): { limit: number; before?: string } {
  const parsed = receiptsQuerySchema.safeParse(query ?? {});
  if (!parsed.success) {
    if (parsed.error.issues[0]!.path[0] === 'limit') throw new GatewayError('invalid_request', 'limit must be an integer from 1 to 100');
    throw new GatewayError('invalid_request', BEFORE_MESSAGE);
  }
  const { limit = DEFAULT_LIMIT, before } = parsed.data;
  // Exclusive; a receipt's created_at as returned (nine fractional digits) continues after that receipt exactly.
  if (before !== undefined && parseInstantNanos(before) === null) throw new GatewayError('invalid_request', BEFORE_MESSAGE);
  return { limit, before };
}

const BEFORE_MESSAGE = "before must be an ISO 8601 timestamp (at most 9 fractional digits), such as a receipt's created_at";

export function registerReceiptsRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  app.get('/receipts', async (request): Promise<ReceiptList> => {
    const key = authenticatedKey(request);
    const page = await deps.store.listReceipts(key.accountId, parseQuery(request.query));
    return { object: 'list', data: page.data.map(renderReceipt), has_more: page.hasMore };
  });

  app.get('/receipts/:id', async (request): Promise<Receipt> => {
    const { id } = request.params as { id: string };
    const receipt = await deps.store.getReceipt(authenticatedKey(request).accountId, id);
    if (!receipt) throw new GatewayError('not_found', `No receipt ${id} on this account.`);
    return renderReceipt(receipt);
  });
}
