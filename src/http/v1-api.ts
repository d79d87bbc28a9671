import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/gateway-error.ts';
import type { RateDecision } from '../limits/rate-limiter.ts';
import type { ApiKeyRecord } from '../storage/records.ts';
import { registerBalanceRoute } from './balance-route.ts';
import { registerChatCompletionsRoute } from './chat/chat-completions-route.ts';
import { registerCountTokensRoute, registerMessagesRoute } from './chat/messages-route.ts';
import { registerResponsesRoute } from './chat/responses-route.ts';
import { registerFixReadRoutes, registerFixRunRoutes } from './fix/fix-routes.ts';
import type { GatewayDeps } from './gateway-deps.ts';
import { registerModelsRoute } from './models-route.ts';
import { registerReceiptsRoutes } from './receipts-route.ts';
import { openLifecycle } from './request-lifecycle.ts';

/** What a /v1 scope asks of its requests beyond a valid API key. */
export interface ScopePolicy {
  /** Counted by the key's rate limit: model calls, fix quotes and runs; never reads. */
  rateLimited: boolean;
  /** Model requests: the receipt's endpoint; each request gets one metered lifecycle (request-lifecycle.ts). */
  endpoint?: string;
}

/** Counts the request against its key's rate limit; null when the key has none. */
function takeRate(deps: GatewayDeps, key: ApiKeyRecord): Promise<RateDecision> | null {
  const perMinute = key.rateLimitPerMinute ?? deps.config.limits.default_rate_limit_per_minute;
  return perMinute > 0 ? deps.rateLimiter.take(key.id, perMinute) : null;
}

/** Refuses a request over its key's rate limit (an HTTP request's or a socket turn's). `taken`: counted already (with the key check). */
export async function enforceRateLimit(deps: GatewayDeps, key: ApiKeyRecord, taken?: Promise<RateDecision> | null): Promise<void> {
  const perMinute = key.rateLimitPerMinute ?? deps.config.limits.default_rate_limit_per_minute;
  const pending = taken === undefined ? takeRate(deps, key) : taken;
  if (pending === null) return;
  const decision = await pending;
  if (decision.allowed) return;
  deps.metrics.rateLimited(key.prefix);
  throw new GatewayError('rate_limit_exceeded', `This key allows ${perMinute} requests per minute. Retry after ${decision.retryAfterSeconds} s.`, {
    'retry-after': String(decision.retryAfterSeconds),
  });
}

/**
 * The onRequest hook of a /v1 scope, one per request: authenticate the key, follow the rules it
 * may have changed, open a model request's lifecycle (before the rate limit, so a refused request
 * has its receipt too), then count the rate limit. It runs before the body is read: a bad body
 * from a valid key still gets its receipt.
 */
export function keyScopeHook(deps: GatewayDeps, policy: ScopePolicy) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    // A warm key's rate limit is counted alongside the keys-version read: one Redis round trip.
    let early: { key: ApiKeyRecord; taken: Promise<RateDecision> | null } | undefined;
    const countEarly = (key: ApiKeyRecord) => {
      const taken = takeRate(deps, key);
      taken?.catch(() => undefined);
      early = { key, taken };
    };
    const key = await deps.keys.authenticate(request.headers, request.raw.rawHeaders, Date.now(), policy.rateLimited ? countEarly : undefined);
    request.apiKey = key;
    // Alias rules changed in the console move the same version as keys: follow them.
    await deps.rules.sync(deps.keys.version);
    if (policy.endpoint !== undefined) openLifecycle(deps, request, reply, policy.endpoint);
    if (policy.rateLimited) await enforceRateLimit(deps, key, early?.key.id === key.id ? early.taken : undefined);
  };
}

/** A scope of /v1 whose routes share `policy`. */
function keyScope(v1: FastifyInstance, deps: GatewayDeps, policy: ScopePolicy, routes: (scope: FastifyInstance) => void): void {
  v1.register(async (scope) => {
    scope.addHook('onRequest', keyScopeHook(deps, policy));
    routes(scope);
  });
}

/**
 * The API under /v1, as one encapsulated plugin: API-key auth, rate limits and metering are the
 * hooks of its scopes, so the routes outside it (/health, /ready, /metrics, the console, the
 * OpenAPI document) never run them. Unknown /v1 paths reach the app's not-found handler unauthenticated.
 */
export function registerV1Api(app: FastifyInstance, deps: GatewayDeps): void {
  app.register(
    async (v1) => {
      keyScope(v1, deps, { rateLimited: false }, (scope) => {
        registerModelsRoute(scope, deps);
        registerReceiptsRoutes(scope, deps);
        registerBalanceRoute(scope, deps);
        registerCountTokensRoute(scope, deps);
        registerFixReadRoutes(scope, deps);
      });
      // A fix run meters itself: it outlives its request (fix-runner.ts).
      keyScope(v1, deps, { rateLimited: true }, (scope) => registerFixRunRoutes(scope, deps));
      keyScope(v1, deps, { rateLimited: true, endpoint: 'chat.completions' }, (scope) => registerChatCompletionsRoute(scope, deps));
      keyScope(v1, deps, { rateLimited: true, endpoint: 'responses' }, (scope) => registerResponsesRoute(scope, deps));
      keyScope(v1, deps, { rateLimited: true, endpoint: 'messages' }, (scope) => registerMessagesRoute(scope, deps));
    },
    { prefix: '/v1' },
  );
}
