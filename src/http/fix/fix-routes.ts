import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { keyAllowsModel, requireModelAllowed, requireScope } from '../../auth/key-authenticator.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import { aliasOfTier, FIX_TIERS, fixAgents } from '../../fix/fix-agents.ts';
import { parseQuoteRequest, parseRunRequest } from '../../fix/fix-input.ts';
import { fixRunEventsQuerySchema, type FixAgentList } from '../../fix/fix-schemas.ts';
import { firstStepRequest, minimalPromptTokens } from '../../fix/fix-prompt.ts';
import { approvedMaximum, coveredSteps, priceFix, tierPriceRange } from '../../fix/price-fix.ts';
import { renderEvent, renderQuote, renderRun } from '../../fix/render-fix.ts';
import { connectedCandidates } from '../../fix/tier-models.ts';
import { newSuffix } from '../../lib/ids.ts';
import { formatUsd } from '../../lib/money.ts';
import type { ApiKeyRecord, FixQuoteRecord, FixRunRecord, ReceiptStatus } from '../../storage/records.ts';
import { asGatewayError } from '../error-handling.ts';
import type { GatewayDeps } from '../gateway-deps.ts';
import { authenticatedKey } from '../request-context.ts';
import { SseWriter } from '../chat/sse-writer.ts';

/** A quote can be run this long after it was made. */
export const QUOTE_TTL_MS = 5 * 60_000;

function requireFixModel(key: ApiKeyRecord, tier: FixQuoteRecord['tier']): void {
  try {
    requireModelAllowed(key, aliasOfTier(tier));
  } catch {
    throw new GatewayError(
      'model_not_allowed',
      `This key may not use ${aliasOfTier(tier)}, the alias of the ${tier} tier; a fix key limited to certain models must allow its tier's alias.`,
    );
  }
}

async function listAgents(deps: GatewayDeps, key: ApiKeyRecord): Promise<FixAgentList> {
  const tiers = await Promise.all(
    FIX_TIERS.map(async (tier) => {
      const connected = await connectedCandidates(deps, tier);
      return { tier, connected, priced: connected.length ? connected : (deps.catalog.aliases.get(aliasOfTier(tier))?.candidates ?? []) };
    }),
  );
  const data = [];
  for (const agent of fixAgents) {
    const minimal = await minimalPromptTokens(agent);
    data.push({
      object: 'fix.agent' as const,
      id: agent.id,
      name: agent.name,
      description: agent.description,
      input: agent.input,
      default_steps: agent.defaultSteps,
      tiers: tiers.map(({ tier, connected, priced }) => {
        const range = tierPriceRange(priced, agent.defaultSteps, minimal);
        return {
          tier,
          model: aliasOfTier(tier),
          connected: connected.length > 0,
          connected_models: connected.map((model) => model.id),
          allowed_for_key: keyAllowsModel(key, aliasOfTier(tier)),
          price: {
            smallest: formatUsd(range.smallestNano),
            typical: formatUsd(range.typicalNano),
            largest: formatUsd(range.largestNano),
            largest_any_steps: formatUsd(range.largestAnyStepsNano),
          },
          max_input_tokens: range.maxInputTokens,
        };
      }),
    });
  }
  return { object: 'list', data };
}

/** The model a fix request's receipt names, once known (the tier's alias). */
const requestedModels = new WeakMap<FastifyRequest, string>();

/** The receipt id of a request: its request id's suffix. */
function receiptIdOf(request: FastifyRequest): string {
  return `rcpt_${request.requestId.slice('req_'.length)}`;
}

/**
 * The receipt of a fix request that called no provider, at cost 0: a quote, a run refused
 * before it started, a quote posted again. Its id shares the request id's suffix and is sent as
 * x-svc-receipt-id. A run that starts has the receipt its runner settles instead.
 */
async function freeReceipt(deps: GatewayDeps, request: FastifyRequest, reply: FastifyReply, status: ReceiptStatus, errorCode: string | null) {
  const receiptId = receiptIdOf(request);
  reply.header('x-svc-receipt-id', receiptId);
  const metered = deps.meter.begin({
    requestId: request.requestId,
    receiptId,
    key: request.apiKey!,
    endpoint: request.routeOptions.url?.endsWith('/fix/quote') ? 'fix.quote' : 'fix.runs',
    stream: false,
    startedAt: Date.now() - Math.round(reply.elapsedTime),
  });
  metered.requestedModel = requestedModels.get(request) ?? null;
  await metered.settle(status, errorCode);
}

async function quote(deps: GatewayDeps, request: FastifyRequest, reply: FastifyReply) {
  const key = authenticatedKey(request);
  requireScope(key, 'fix');
  const ask = parseQuoteRequest(request.body);
  requestedModels.set(request, aliasOfTier(ask.tier));
  requireFixModel(key, ask.tier);
  const candidates = await connectedCandidates(deps, ask.tier);
  if (candidates.length === 0) {
    throw new GatewayError(
      'provider_unavailable',
      `No model of the ${ask.tier} tier (${aliasOfTier(ask.tier)}) is connected right now; try another tier or later.`,
    );
  }
  const steps = ask.maxSteps ?? ask.agent.defaultSteps;
  const price = await priceFix(candidates, firstStepRequest(ask.agent, ask.input), steps);
  const maxCostNano = approvedMaximum(price, ask.maxCostNano);
  const now = deps.now();
  const record: FixQuoteRecord = {
    id: `quote_${newSuffix(now)}`,
    accountId: key.accountId,
    keyId: key.id,
    agent: ask.agent.id,
    tier: ask.tier,
    input: ask.input as unknown as Record<string, unknown>,
    inputTokens: price.inputTokens,
    estimatedCostNano: Math.min(price.estimatedCostNano, maxCostNano),
    maxCostNano,
    stepBudget: steps,
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + QUOTE_TTL_MS).toISOString(),
  };
  await deps.store.insertFixQuote(record);
  await freeReceipt(deps, request, reply, 'succeeded', null);
  return renderQuote(record, coveredSteps(price, maxCostNano, steps));
}

async function startRun(
  deps: GatewayDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  key: ApiKeyRecord,
  quoteId: string,
  stream: boolean,
): Promise<FixRunRecord> {
  const found = await deps.store.getFixQuote(key.accountId, quoteId);
  if (!found) throw new GatewayError('not_found', `No quote ${quoteId} on this account.`, {}, 'quote');
  requestedModels.set(request, aliasOfTier(found.tier));
  requireFixModel(key, found.tier);
  // A quote that already ran returns its run, also after it expired; this request has its own receipt.
  const existing = await deps.store.getFixRunByQuote(key.accountId, found.id);
  if (existing) {
    await freeReceipt(deps, request, reply, 'succeeded', null);
    return existing;
  }
  if (deps.now() >= Date.parse(found.expiresAt)) {
    throw new GatewayError('quote_expired', `Quote ${found.id} expired at ${found.expiresAt} (quotes are valid 5 minutes); ask for a new one.`);
  }
  const receiptId = receiptIdOf(request);
  // From here on the runner settles this receipt, a refusal of the hold too.
  reply.header('x-svc-receipt-id', receiptId);
  const metered = deps.meter.begin({
    requestId: request.requestId,
    receiptId,
    key,
    endpoint: 'fix.runs',
    stream,
    startedAt: Date.now(),
  });
  const trace = deps.tracing?.begin(request.headers, found.agent) ?? null;
  return deps.fix.start(found, key, metered, `run_${request.requestId.slice('req_'.length)}`, trace);
}

async function findRun(deps: GatewayDeps, key: ApiKeyRecord, id: string): Promise<FixRunRecord> {
  requireScope(key, 'fix');
  const run = await deps.store.getFixRun(key.accountId, id);
  if (!run) throw new GatewayError('not_found', `No fix run ${id} on this account.`);
  return run;
}

async function runView(deps: GatewayDeps, run: FixRunRecord) {
  const current = (await deps.store.getFixRun(run.accountId, run.id)) ?? run;
  return renderRun(current, await deps.store.listFixRunEvents(run.id, 0));
}

/** Stops following when the client goes away; the run itself goes on. */
function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.on('close', () => controller.abort());
  return controller.signal;
}

/** Server-sent events of a run after `after`, until it ends: `id` is the sequence (resume with Last-Event-ID). */
async function streamRun(deps: GatewayDeps, reply: FastifyReply, run: FixRunRecord, after: number): Promise<void> {
  const signal = clientGone(reply);
  reply.hijack();
  const writer = new SseWriter(reply.raw);
  writer.open(reply.getHeaders() as Record<string, string>);
  try {
    for await (const event of deps.fix.follow(run, after, signal)) {
      const completed = event.type === 'run.completed' ? await runView(deps, run) : undefined;
      await writer.write(`id: ${event.sequence}\nevent: ${event.type}\ndata: ${JSON.stringify(renderEvent(event, completed))}\n\n`);
    }
  } catch (error) {
    deps.logger.error({ err: error, runId: run.id }, 'fix run events failed');
  } finally {
    writer.end();
  }
}

function parseAfter(request: FastifyRequest): number {
  const raw = (request.query as Record<string, unknown>).after ?? request.headers['last-event-id'] ?? '0';
  const parsed = fixRunEventsQuerySchema.shape.after.safeParse(raw);
  if (!parsed.success) throw new GatewayError('invalid_request', 'after (or Last-Event-ID) must be a whole number', {}, 'after');
  return parsed.data ?? 0;
}

/** The fix API's reads and cancel, in the /v1 scope of key auth alone (v1-api.ts). */
export function registerFixReadRoutes(scope: FastifyInstance, deps: GatewayDeps): void {
  scope.get('/fix/agents', (request) => listAgents(deps, authenticatedKey(request)));

  scope.get('/fix/runs/:id', async (request) => {
    const run = await findRun(deps, authenticatedKey(request), (request.params as { id: string }).id);
    return renderRun(run, await deps.store.listFixRunEvents(run.id, 0));
  });

  scope.get('/fix/runs/:id/events', async (request, reply) => {
    const after = parseAfter(request);
    const run = await findRun(deps, authenticatedKey(request), (request.params as { id: string }).id);
    reply.header('x-svc-run-id', run.id);
    return streamRun(deps, reply, run, after);
  });

  scope.post('/fix/runs/:id/cancel', async (request) => {
    const key = authenticatedKey(request);
    requireScope(key, 'fix');
    const { id } = request.params as { id: string };
    const run = await deps.fix.cancel(key.accountId, id);
    if (!run) throw new GatewayError('not_found', `No fix run ${id} on this account.`);
    return runView(deps, run);
  });
}

/**
 * Quotes and runs, counted by the key's rate limit (their /v1 scope, v1-api.ts); a run meters
 * itself (fix-runner.ts). Every request of theirs that has a key has a receipt: a refusal before
 * the run started (the rate limit, a bad body, an unknown or expired quote) one at cost 0.
 */
export function registerFixRunRoutes(scope: FastifyInstance, deps: GatewayDeps): void {
  scope.setErrorHandler(async (raw: Error, request, reply) => {
    if (request.apiKey && !reply.hasHeader('x-svc-receipt-id')) {
      const error = asGatewayError(raw, deps.config.server.body_limit_bytes);
      try {
        await freeReceipt(deps, request, reply, error.code === 'request_cancelled' ? 'cancelled' : 'failed', error.code);
      } catch (failure) {
        request.log.error({ err: failure, requestId: request.requestId }, 'could not record a refused fix request');
      }
    }
    // The app's error handler sends the envelope.
    throw raw;
  });

  scope.post('/fix/quote', (request, reply) => quote(deps, request, reply));

  scope.post('/fix/runs', async (request, reply) => {
    const key = authenticatedKey(request);
    requireScope(key, 'fix');
    const body = parseRunRequest(request.body);
    const run = await startRun(deps, request, reply, key, body.quote, body.stream);
    reply.header('x-svc-run-id', run.id);
    if (body.stream) return streamRun(deps, reply, run, 0);
    const signal = clientGone(reply);
    for await (const _event of deps.fix.follow(run, 0, signal));
    return runView(deps, run);
  });
}
