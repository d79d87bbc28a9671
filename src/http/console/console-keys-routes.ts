import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { issueApiKey } from '../../auth/issue-api-key.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import { formatUsd } from '../../lib/money.ts';
import { ALERTS_ACTION, currentAlerts, readAlertSettings, type ActiveAlert, type AlertSettings } from '../../limits/account-alerts.ts';
import type { ApiKeyRecord } from '../../storage/records.ts';
import type { GatewayDeps } from '../gateway-deps.ts';
import { signedIn } from './console-guard.ts';
import { displayAddress, parseWith, usd } from './console-json.ts';

const usdOrNull = usd.nullable();
const rateLimit = z.number().int().min(1).max(1_000_000).nullable();

function keyStatus(key: ApiKeyRecord, now: number): 'active' | 'revoked' | 'expired' {
  if (key.revokedAt) return 'revoked';
  if (key.expiresAt && Date.parse(key.expiresAt) <= now) return 'expired';
  return 'active';
}

function renderKey(key: ApiKeyRecord, now: number, spentTodayNano?: number) {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    scopes: key.scopes,
    models: key.models,
    daily_limit: key.dailyLimitNano === null ? null : formatUsd(key.dailyLimitNano),
    rate_limit_per_minute: key.rateLimitPerMinute,
    expires_at: key.expiresAt,
    created_at: key.createdAt,
    last_used_at: key.lastUsedAt,
    revoked_at: key.revokedAt,
    status: keyStatus(key, now),
    ...(spentTodayNano === undefined ? {} : { spent_today: formatUsd(spentTodayNano) }),
  };
}

function renderAlertSettings(settings: AlertSettings) {
  return {
    balance_below: settings.balanceBelowNano === null ? null : formatUsd(settings.balanceBelowNano),
    budget_share: settings.budgetSharePercent,
  };
}

function renderAlert(alert: ActiveAlert) {
  return { kind: alert.kind, threshold: formatUsd(alert.thresholdNano), value: formatUsd(alert.valueNano) };
}

/** Keys (create, list, revoke) and their limits, and the account's monthly budget. */
export function registerKeysRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  const actorOf = (request: Parameters<typeof signedIn>[0]) => displayAddress(signedIn(request).member.address);
  const knownModels = () => deps.catalog.knownNames();

  const createRequest = z
    .object({
      name: z.string().trim().min(1).max(100),
      scopes: z
        .array(z.enum(['inference', 'fix']))
        .min(1)
        .default(['inference']),
      models: z.array(z.string()).min(1).nullable().default(null),
      daily_limit: usdOrNull.default(null),
      rate_limit_per_minute: rateLimit.default(null),
      expires_at: z.string().datetime({ offset: true }).nullable().default(null),
    })
    .strict();

  app.get('/keys', async (request) => {
    const { session } = signedIn(request);
    const day = new Date(deps.now()).toISOString().slice(0, 10);
    const keys = await deps.store.listKeys(session.accountId);
    const spent = await Promise.all(keys.map((key) => deps.store.keyDaySpend(key.id, day)));
    return { object: 'list', data: keys.map((key, index) => renderKey(key, deps.now(), spent[index]!.chargedNano)) };
  });

  app.post('/keys', async (request) => {
    const { session } = signedIn(request);
    const body = parseWith(createRequest, request.body);
    const unknown = (body.models ?? []).filter((model) => !knownModels().includes(model));
    if (unknown.length)
      throw new GatewayError(
        'invalid_request',
        `models: unknown ${unknown.join(', ')}; choose aliases or model ids from GET /console/api/rules`,
        {},
        'models',
      );
    if (body.expires_at && Date.parse(body.expires_at) <= deps.now())
      throw new GatewayError('invalid_request', 'expires_at: must be in the future', {}, 'expires_at');
    const { key, record } = await issueApiKey(deps.store, {
      accountId: session.accountId,
      name: body.name,
      scopes: [...new Set(body.scopes)],
      models: body.models && [...new Set(body.models)],
      dailyLimitNano: body.daily_limit,
      rateLimitPerMinute: body.rate_limit_per_minute,
      expiresAt: body.expires_at && new Date(body.expires_at).toISOString(),
      now: new Date(deps.now()),
      actor: actorOf(request),
    });
    return { key, record: renderKey(record, deps.now()) };
  });

  app.post('/keys/:id/revoke', async (request) => {
    const { session } = signedIn(request);
    const { id } = request.params as { id: string };
    const revoked = await deps.store.revokeKey(session.accountId, id, new Date(deps.now()).toISOString(), actorOf(request));
    if (!revoked) throw new GatewayError('not_found', `No active key ${id}.`);
    return renderKey(revoked, deps.now());
  });

  const changeRequest = z
    .object({
      name: z.string().trim().min(1).max(100).optional(),
      models: z.array(z.string()).min(1).nullable().optional(),
      daily_limit: usdOrNull.optional(),
      rate_limit_per_minute: rateLimit.optional(),
    })
    .strict();

  app.patch('/keys/:id', async (request) => {
    const { session } = signedIn(request);
    const { id } = request.params as { id: string };
    const body = parseWith(changeRequest, request.body);
    const unknown = (body.models ?? []).filter((model) => !knownModels().includes(model));
    if (unknown.length)
      throw new GatewayError('invalid_request', `models: unknown ${unknown.join(', ')}; choose aliases or model ids from the list`, {}, 'models');
    const updated = await deps.store.updateKeyLimits(
      session.accountId,
      id,
      {
        name: body.name,
        models: body.models && [...new Set(body.models)],
        dailyLimitNano: body.daily_limit,
        rateLimitPerMinute: body.rate_limit_per_minute,
      },
      actorOf(request),
      new Date(deps.now()).toISOString(),
    );
    if (!updated) throw new GatewayError('not_found', `No key ${id}.`);
    return renderKey(updated, deps.now());
  });

  app.get('/limits', async (request) => {
    const { session } = signedIn(request);
    const month = new Date(deps.now()).toISOString().slice(0, 7);
    const summary = await deps.store.accountSummary(session.accountId, month);
    const keys = await deps.store.listKeys(session.accountId);
    return {
      monthly_budget: summary.monthlyBudgetNano === null ? null : formatUsd(summary.monthlyBudgetNano),
      month: { period: month, spend: formatUsd(summary.monthChargedNano), held: formatUsd(summary.monthHeldNano) },
      default_rate_limit_per_minute: deps.config.limits.default_rate_limit_per_minute,
      keys: keys.map((key) => renderKey(key, deps.now())),
    };
  });

  const alertsRequest = z
    .object({
      balance_below: usdOrNull,
      budget_share: z.number().int().min(1).max(1000).nullable(),
    })
    .strict();

  app.get('/alerts', async (request) => {
    const { session } = signedIn(request);
    const [settings, alerts] = await Promise.all([
      readAlertSettings(deps.store, session.accountId),
      currentAlerts(deps.store, session.accountId, deps.now()),
    ]);
    return { settings: renderAlertSettings(settings), active: alerts.map(renderAlert) };
  });

  // Kept as the newest alerts.set entry of the audit log (account-alerts.ts): the change and its record are one write.
  app.put('/limits/alerts', async (request) => {
    const { session } = signedIn(request);
    const body = parseWith(alertsRequest, request.body);
    const previous = await readAlertSettings(deps.store, session.accountId);
    const next = { balanceBelowNano: body.balance_below, budgetSharePercent: body.budget_share };
    const shown = (settings: typeof next) => ({
      balanceBelow: settings.balanceBelowNano === null ? null : formatUsd(settings.balanceBelowNano),
      budgetShare: settings.budgetSharePercent,
    });
    const before = Object.fromEntries(Object.entries(shown(previous)).filter(([field, value]) => shown(next)[field as 'budgetShare'] !== value));
    await deps.store.appendAudit({
      accountId: session.accountId,
      at: new Date(deps.now()).toISOString(),
      actor: actorOf(request),
      action: ALERTS_ACTION,
      detail: { ...next, ...shown(next), before },
    });
    return { settings: renderAlertSettings(next), active: (await currentAlerts(deps.store, session.accountId, deps.now())).map(renderAlert) };
  });

  app.put('/limits/monthly-budget', async (request) => {
    const { session } = signedIn(request);
    const body = parseWith(z.object({ monthly_budget: usdOrNull }).strict(), request.body);
    await deps.store.setMonthlyBudget(session.accountId, body.monthly_budget, actorOf(request));
    return { monthly_budget: body.monthly_budget === null ? null : formatUsd(body.monthly_budget) };
  });
}
