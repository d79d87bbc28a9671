import Fastify, { LogController, type FastifyInstance, type FastifyReply } from 'fastify';
import { GatewayError } from './errors/gateway-error.ts';
import { renderOpenAIError } from './errors/render-error.ts';
import { newRequestIds } from './lib/ids.ts';
import type { RateDecision } from './limits/rate-limiter.ts';
import type { ApiKeyRecord } from './storage/records.ts';
import type { GatewayDeps } from './http/gateway-deps.ts';
import { registerMessagesRoutes } from './http/chat/messages-route.ts';
import { registerBalanceRoute } from './http/balance-route.ts';
import { closeConnectionsWhenClosing, installClientDeparture, settleIfClientLeaves } from './http/chat/client-departure.ts';
import { answerClientError, installErrorHandling } from './http/error-handling.ts';
import { registerChatCompletionsRoute } from './http/chat/chat-completions-route.ts';
import { registerFixRoutes } from './http/fix/fix-routes.ts';
import { registerHealthRoutes } from './http/health-routes.ts';
import { registerMetricsRoute } from './metrics/metrics-routes.ts';
import { responseLogLine } from './metrics/request-log.ts';
import { registerConsoleApi } from './http/console/console-api.ts';
import { registerConsolePages } from './http/console/console-pages.ts';
import { registerModelsRoute } from './http/models-route.ts';
import { registerOpenApiRoute } from './http/openapi/openapi-route.ts';
import { registerReceiptsRoutes } from './http/receipts-route.ts';
import { registerResponsesRoute } from './http/chat/responses-route.ts';
import { routeOptions } from './http/request-context.ts';
import { jsonBodyParser, warmCountingAfter } from './http/body/parse-json-body.ts';

/** Counts the request against its key's rate limit; null when the key has none. */
function takeRate(deps: GatewayDeps, key: ApiKeyRecord): Promise<RateDecision> | null {
  const perMinute = key.rateLimitPerMinute ?? deps.config.limits.default_rate_limit_per_minute;
  return perMinute > 0 ? deps.rateLimiter.take(key.id, perMinute) : null;
}

/** Model requests only: listing receipts or models never eats a key's request budget. `taken`: counted already (with the key check). */
async function enforceRateLimit(deps: GatewayDeps, key: ApiKeyRecord, taken?: Promise<RateDecision> | null): Promise<void> {
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

/** Build the HTTP app from its dependencies. It never listens: gateway.ts and tests do that. */
export function buildApp(deps: GatewayDeps): FastifyInstance {
  const app = Fastify({
    loggerInstance: deps.logger,
    // Receipts record every request; a log line per request would only cost CPU.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.config.server.body_limit_bytes,
    return503OnClosing: true,
    // On close, idle keep-alive connections go at once; requests in flight may finish (see gateway.ts).
    forceCloseConnections: 'idle',
    // A URL the router cannot read (a bad escape, an overlong segment) still gets the envelope and a request id.
    frameworkErrors: (error, _request, reply) => {
      const { requestId } = newRequestIds();
      const message =
        error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'A path segment of this URL is too long.' : 'The URL is not valid (check its percent-escapes).';
      (reply as FastifyReply)
        .header('x-svc-request-id', requestId)
        .code(400)
        .send(renderOpenAIError(new GatewayError('invalid_request', message), requestId));
    },
    // Bytes that are not an HTTP request never reach a route: the envelope all the same.
    clientErrorHandler: answerClientError,
  });

  app.decorateRequest('requestId', '');
  app.decorateRequest('receiptId', '');
  app.decorateRequest('apiKey', null);
  app.decorateRequest('metered', null);

  // curl -d sends form encoding by default; read any body as JSON rather than answer 415. One
  // parser for every content type, refusing bodies nested deeper than any real request.
  app.removeContentTypeParser('application/json');
  const json = jsonBodyParser(deps.config.server.body_limit_bytes);
  app.addContentTypeParser('application/json', json);
  app.addContentTypeParser('*', json);

  // Authenticate before the body is parsed, so a bad body from a valid key still gets its receipt.
  app.addHook('onRequest', async (request, reply) => {
    const { requestId, receiptId } = newRequestIds();
    request.requestId = requestId;
    reply.header('x-svc-request-id', requestId);
    const options = routeOptions(request);
    if (options.public || options.console || !request.routeOptions.url) return;
    const limited = options.billable || options.rateLimited;
    // A warm key's rate limit is counted alongside the keys-version read: one Redis round trip.
    let early: { key: ApiKeyRecord; taken: Promise<RateDecision> | null } | undefined;
    request.apiKey = await deps.keys.authenticate(request.headers, request.raw.rawHeaders, Date.now(), (key) => {
      if (!limited) return;
      const taken = takeRate(deps, key);
      taken?.catch(() => undefined);
      early = { key, taken };
    });
    // Alias rules changed in the console move the same version as keys: follow them.
    await deps.rules.sync(deps.keys.version);
    if (options.billable) {
      request.receiptId = receiptId;
      reply.header('x-svc-receipt-id', receiptId);
      request.metered = deps.meter.begin({
        requestId,
        receiptId,
        key: request.apiKey,
        endpoint: options.billable,
        stream: false,
        startedAt: Date.now(),
      });
      settleIfClientLeaves(request, reply);
    }
    if (limited) await enforceRateLimit(deps, request.apiKey, early?.key.id === request.apiKey.id ? early.taken : undefined);
  });

  app.addHook('onResponse', async (request, reply) => {
    deps.metrics.response(request.method, request.routeOptions.url, reply.statusCode);
    warmCountingAfter(request);
    // Model requests are logged with their receipt (gateway.ts); the others here.
    if (deps.config.logging.requests && !request.metered) request.log.info(responseLogLine(request, reply), 'request');
  });

  installErrorHandling(app, deps);
  installClientDeparture(app);
  closeConnectionsWhenClosing(app);
  registerHealthRoutes(app, deps);
  if (deps.config.metrics.enabled && deps.config.metrics.port === undefined) registerMetricsRoute(app, deps.metrics);
  registerChatCompletionsRoute(app, deps);
  registerResponsesRoute(app, deps);
  registerMessagesRoutes(app, deps);
  registerModelsRoute(app, deps);
  registerReceiptsRoutes(app, deps);
  registerBalanceRoute(app, deps);
  registerFixRoutes(app, deps);
  registerOpenApiRoute(app);
  registerConsoleApi(app, deps);
  registerConsolePages(app);
  return app;
}
