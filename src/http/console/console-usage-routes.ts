import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.ts';
import { formatUsd } from '../../lib/money.ts';
import type { GatewayDeps } from '../gateway-deps.ts';
import { signedIn } from './console-guard.ts';
import { parseWith } from './console-json.ts';

const HOUR_MS = 3_600_000;
const RANGES_MS: Record<string, number> = { '24h': 24 * HOUR_MS, '7d': 7 * 24 * HOUR_MS, '30d': 30 * 24 * HOUR_MS, '90d': 90 * 24 * HOUR_MS };
/** At most this many buckets a series: 90 days by the hour is not a chart anyone reads. */
const MOST_BUCKETS = 24 * 31;
const instant = z
  .string()
  .datetime({ offset: true })
  .transform((value) => new Date(value).toISOString());

const usageQuery = z
  .object({
    range: z.enum(['24h', '7d', '30d', '90d']).optional(),
    from: instant.optional(),
    to: instant.optional(),
    bucket: z.enum(['hour', 'day']).optional(),
    by: z.enum(['account', 'key', 'model']).default('account'),
    key: z.string().optional(),
    model: z.string().optional(),
  })
  .strict();

/** The start of the UTC hour or day `at` falls in. */
function bucketStart(at: number, bucket: 'hour' | 'day'): number {
  const size = bucket === 'hour' ? HOUR_MS : 24 * HOUR_MS;
  return Math.floor(at / size) * size;
}

/** Usage over time: spend, requests, errors, tokens and failed provider calls per UTC hour or day, for the account, per key or per model. */
export function registerUsageRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  app.get('/usage', async (request) => {
    const { session } = signedIn(request);
    const query = parseWith(usageQuery, request.query);
    const now = deps.now();
    const to = query.to ?? new Date(now).toISOString();
    const from = query.from ?? new Date(Date.parse(to) - RANGES_MS[query.range ?? '7d']!).toISOString();
    if (from >= to) throw new GatewayError('invalid_request', 'from: must be before to', {}, 'from');
    const bucket = query.bucket ?? (Date.parse(to) - Date.parse(from) <= 48 * HOUR_MS ? 'hour' : 'day');
    const size = bucket === 'hour' ? HOUR_MS : 24 * HOUR_MS;
    const buckets = (bucketStart(Date.parse(to) - 1, bucket) - bucketStart(Date.parse(from), bucket)) / size + 1;
    if (buckets > MOST_BUCKETS)
      throw new GatewayError('invalid_request', `bucket: ${buckets} ${bucket}s is too many for one chart; use day`, {}, 'bucket');

    const keys = await deps.store.listKeys(session.accountId);
    let keyId: string | undefined;
    if (query.key !== undefined) {
      const key = keys.find((candidate) => candidate.id === query.key || candidate.prefix === query.key);
      if (!key) throw new GatewayError('invalid_request', `key: no key with the id or prefix ${query.key}`, {}, 'key');
      keyId = key.id;
    }
    // A model's usage is the per-model series narrowed to it.
    const by = query.model !== undefined ? 'model' : query.by;
    const rows = (await deps.store.usageSeries(session.accountId, { from, to, bucket, by, keyId })).filter(
      (row) => query.model === undefined || row.name === query.model,
    );
    const keyById = new Map(keys.map((key) => [key.id, key]));
    const groups = [...new Set(rows.map((row) => row.name))];
    return {
      range: { from, to, bucket },
      by,
      key: keyId === undefined ? null : { id: keyId, prefix: keyById.get(keyId)!.prefix, name: keyById.get(keyId)!.name },
      model: query.model ?? null,
      groups: groups.map((name) => {
        const key = by === 'key' ? keyById.get(name) : undefined;
        return { id: name, label: key ? `${key.name} (${key.prefix})` : name };
      }),
      series: rows.map((row) => ({
        start: row.start,
        group: row.name,
        cost: formatUsd(row.costNano),
        requests: row.requests,
        errors: row.errors,
        failed_attempts: row.failedAttempts,
        input_tokens: row.inputTokens,
        output_tokens: row.outputTokens,
      })),
    };
  });
}
