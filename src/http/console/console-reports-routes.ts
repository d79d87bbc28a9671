import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.ts';
import { parseInstantNanos } from '../../lib/instant-nanos.ts';
import { formatUsd, MAX_BALANCE_NANO } from '../../lib/money.ts';
import type { ReceiptCursor, ReceiptFilter, SpendBucket, UsageRow } from '../../storage/records.ts';
import { exportReceipts, matchingReceipts } from '../receipts-export.ts';
import { auditDetail, auditSentence, displayActor } from './audit-sentences.ts';
import type { GatewayDeps } from '../gateway-deps.ts';
import { renderAccountSummary } from '../render-account-summary.ts';
import { renderReceipt } from '../render-receipt.ts';
import { signedIn } from './console-guard.ts';
import { displayAddress, parseWith, usd } from './console-json.ts';

const HOUR_MS = 3_600_000;
const RANGES_MS: Record<string, number> = { '24h': 24 * HOUR_MS, '7d': 7 * 24 * HOUR_MS, '30d': 30 * 24 * HOUR_MS, '90d': 90 * 24 * HOUR_MS };
const instant = z
  .string()
  .datetime({ offset: true })
  .transform((value) => new Date(value).toISOString());
const limit = (most: number, fallback: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .refine((value) => value >= 1 && value <= most, `must be from 1 to ${most}`)
    .default(String(fallback));

/** An opaque cursor: where the previous page ended, the full-precision created_at of its last receipt. */
function encodeCursor(cursor: ReceiptCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt])).toString('base64url');
}

/** Cursors given before created_at had nine digits also carried an id: the instant alone is read. */
function decodeCursor(text: string): ReceiptCursor {
  try {
    const [createdAt] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as [unknown];
    if (typeof createdAt === 'string' && parseInstantNanos(createdAt) !== null) return { createdAt };
  } catch {}
  throw new GatewayError('invalid_request', 'cursor: not a cursor this API gave', {}, 'cursor');
}

const renderBucket = (bucket: SpendBucket) => ({
  start: bucket.start,
  cost: formatUsd(bucket.costNano),
  requests: bucket.requests,
  errors: bucket.errors,
});
const renderUsage = (row: UsageRow) => ({
  name: row.name,
  requests: row.requests,
  errors: row.errors,
  input_tokens: row.inputTokens,
  output_tokens: row.outputTokens,
  cost: formatUsd(row.costNano),
});

/** Overview, receipts, balance and ledger history, audit log. */
export function registerReportsRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  const overviewQuery = z
    .object({
      range: z.enum(['24h', '7d', '30d', '90d']).optional(),
      from: instant.optional(),
      to: instant.optional(),
      bucket: z.enum(['hour', 'day']).optional(),
    })
    .strict();

  app.get('/overview', async (request) => {
    const { session } = signedIn(request);
    const query = parseWith(overviewQuery, request.query);
    const now = deps.now();
    const to = query.to ?? new Date(now).toISOString();
    const from = query.from ?? new Date(Date.parse(to) - RANGES_MS[query.range ?? '7d']!).toISOString();
    if (from >= to) throw new GatewayError('invalid_request', 'from: must be before to', {}, 'from');
    const bucket = query.bucket ?? (Date.parse(to) - Date.parse(from) <= 48 * HOUR_MS ? 'hour' : 'day');
    const month = new Date(now).toISOString().slice(0, 7);
    const [summary, series, byModel, byKey, keys] = await Promise.all([
      deps.store.accountSummary(session.accountId, month),
      deps.store.spendSeries(session.accountId, { from, to, bucket }),
      deps.store.usageBy(session.accountId, { from, to, by: 'model' }),
      deps.store.usageBy(session.accountId, { from, to, by: 'key' }),
      deps.store.listKeys(session.accountId),
    ]);
    const keyById = new Map(keys.map((key) => [key.id, key]));
    return {
      ...renderAccountSummary(summary),
      range: { from, to, bucket },
      series: series.map(renderBucket),
      by_model: byModel.map(renderUsage),
      by_key: byKey.map((row) => {
        const key = keyById.get(row.name);
        return { ...renderUsage(row), key_id: row.name, ...(key ? { name: `${key.prefix} (${key.name})` } : {}) };
      }),
    };
  });

  const receiptFilters = {
    key: z.string().optional(),
    model: z.string().optional(),
    alias: z.string().optional(),
    status: z.enum(['succeeded', 'failed', 'cancelled']).optional(),
    error_code: z.string().optional(),
    endpoint: z.string().optional(),
    from: instant.optional(),
    to: instant.optional(),
  };
  const receiptsQuery = z.object({ ...receiptFilters, limit: limit(100, 20), cursor: z.string().optional() }).strict();
  const exportQuery = z.object({ ...receiptFilters, format: z.enum(['csv', 'json']).default('csv') }).strict();

  /** The store's filter of a query; `key` is a key id or the prefix the pages show (svc_...). */
  async function receiptFilter(accountId: string, query: z.output<typeof exportQuery> | z.output<typeof receiptsQuery>): Promise<ReceiptFilter> {
    let keyId = query.key;
    if (keyId !== undefined && !keyId.startsWith('key_')) {
      const key = (await deps.store.listKeys(accountId)).find((candidate) => candidate.prefix === keyId || candidate.id === keyId);
      if (!key) throw new GatewayError('invalid_request', `key: no key with the id or prefix ${keyId}`, {}, 'key');
      keyId = key.id;
    }
    if (query.from && query.to && query.from >= query.to) throw new GatewayError('invalid_request', 'from: must be before to', {}, 'from');
    return {
      keyId,
      model: query.model,
      requestedModel: query.alias,
      status: query.status,
      errorCode: query.error_code,
      endpoint: query.endpoint,
      from: query.from,
      to: query.to,
    };
  }

  app.get('/receipts', async (request) => {
    const { session } = signedIn(request);
    const query = parseWith(receiptsQuery, request.query);
    const page = await deps.store.searchReceipts(session.accountId, {
      limit: query.limit,
      cursor: query.cursor === undefined ? undefined : decodeCursor(query.cursor),
      filter: await receiptFilter(session.accountId, query),
    });
    const last = page.data.at(-1);
    return {
      object: 'list',
      data: page.data.map(renderReceipt),
      has_more: page.hasMore,
      next_cursor: page.hasMore && last ? encodeCursor({ createdAt: last.createdAt }) : null,
    };
  });

  // The whole filtered set, streamed page by page from the store (never one page, never all in memory).
  app.get('/receipts/export', async (request, reply) => {
    const { session } = signedIn(request);
    const query = parseWith(exportQuery, request.query);
    const filter = await receiptFilter(session.accountId, query);
    const stamp = new Date(deps.now()).toISOString().slice(0, 19).replaceAll(':', '-');
    reply
      .header('content-type', query.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8')
      .header('content-disposition', `attachment; filename="receipts-${stamp}Z.${query.format}"`);
    return reply.send(Readable.from(exportReceipts(matchingReceipts(deps.store, session.accountId, filter), query.format)));
  });

  app.get('/receipts/:id', async (request) => {
    const { id } = request.params as { id: string };
    const receipt = await deps.store.getReceipt(signedIn(request).session.accountId, id);
    if (!receipt) throw new GatewayError('not_found', `No receipt ${id} on this account.`);
    return renderReceipt(receipt);
  });

  const pageQuery = z.object({ limit: limit(200, 50), before: z.string().regex(/^\d+$/).transform(Number).optional() }).strict();

  app.get('/balance', async (request) => {
    const { session } = signedIn(request);
    const query = parseWith(pageQuery, request.query);
    const summary = await deps.store.accountSummary(session.accountId, new Date(deps.now()).toISOString().slice(0, 7));
    const funds = await deps.store.listFunds(session.accountId, { limit: query.limit, beforeId: query.before });
    const { balance, available, holds } = renderAccountSummary(summary);
    return {
      balance,
      available,
      holds,
      funds: funds.map((entry) => ({ id: entry.id, at: entry.at, amount: formatUsd(entry.amountNano), note: entry.note })),
      next_before: funds.length === query.limit ? funds.at(-1)!.id : null,
    };
  });

  const fundsRequest = z
    .object({ amount: usd.refine((nano) => nano > 0, 'must be more than 0'), note: z.string().max(500).nullable().default(null) })
    .strict();

  app.post('/balance/funds', async (request) => {
    const { session, member } = signedIn(request);
    const body = parseWith(fundsRequest, request.body);
    const before = await deps.store.getBalance(session.accountId);
    if (before + body.amount > MAX_BALANCE_NANO) {
      throw new GatewayError('invalid_request', `amount: the balance may not pass ${formatUsd(MAX_BALANCE_NANO)} USD`, {}, 'amount');
    }
    const balance = await deps.store.addFunds(session.accountId, body.amount, displayAddress(member.address), body.note ?? undefined);
    return { balance: formatUsd(balance) };
  });

  const auditQuery = z
    .object({
      limit: limit(200, 50),
      before: z.string().regex(/^\d+$/).transform(Number).optional(),
      actor: z.string().optional(),
      action: z.string().optional(),
    })
    .strict();

  app.get('/audit', async (request) => {
    const { session } = signedIn(request);
    const query = parseWith(auditQuery, request.query);
    const filter = query.actor === undefined && query.action === undefined ? undefined : { actor: query.actor, action: query.action };
    const entries = await deps.store.listAudit(session.accountId, query.limit, query.before, filter);
    return {
      object: 'list',
      data: entries.map((entry) => ({
        id: entry.id,
        at: entry.at,
        actor: displayActor(entry.actor),
        action: entry.action,
        sentence: auditSentence(entry),
        detail: auditDetail(entry.detail),
      })),
      next_before: entries.length === query.limit ? entries.at(-1)!.id : null,
    };
  });
}
