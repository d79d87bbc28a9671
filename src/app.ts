import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { newRequestIds } from './lib/ids.ts';
import type { GatewayDeps } from './http/gateway-deps.ts';
import { closeConnectionsWhenClosing } from './http/chat/client-departure.ts';
import { answerClientError, answerUnreadableUrl, installErrorHandling } from './http/error-handling.ts';
import { registerHealthRoutes } from './http/health-routes.ts';
import { metricsPlacement, registerMetricsRoute } from './metrics/metrics-routes.ts';
import { responseLogLine } from './metrics/request-log.ts';
import { registerConsoleApi } from './http/console/console-api.ts';
import { registerConsolePages } from './http/console/console-pages.ts';
import { registerOpenApiRoute } from './http/openapi/openapi-route.ts';
import { registerV1Api } from './http/v1-api.ts';
import { registerResponsesSocket } from './http/chat/responses-socket.ts';
import { jsonBodyParser, warmCountingAfter } from './http/body/parse-json-body.ts';
import { compileBodyValidators } from './formats/body-validators.ts';

/** Build the HTTP app from its dependencies. It never listens: gateway.ts and tests do that. */
export function buildApp(deps: GatewayDeps): FastifyInstance {
  const app = Fastify({
    loggerInstance: deps.logger,
    // Receipts record every request; a log line per request would only cost CPU.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.config.server.body_limit_bytes,
    // A client trickling its headers or body is cut (408) instead of holding a connection forever.
    requestTimeout: deps.config.server.request_timeout_ms,
    http: {
      headersTimeout: deps.config.server.headers_timeout_ms,
      // How often Node looks for requests past those deadlines (its default is 30 s).
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(deps.config.server.headers_timeout_ms / 4))),
    },
    return503OnClosing: true,
    // On close, idle keep-alive connections go at once; requests in flight may finish (see gateway.ts).
    forceCloseConnections: 'idle',
    // A URL the router cannot read (a bad escape, an overlong segment) still gets the envelope and a request id.
    frameworkErrors: answerUnreadableUrl,
    // Bytes that are not an HTTP request never reach a route: the envelope all the same.
    clientErrorHandler: answerClientError,
  });

  app.decorateRequest('requestId', '');
  app.decorateRequest('apiKey', null);
  app.decorateRequest('lifecycle', null);

  // curl -d sends form encoding by default; read any body as JSON rather than answer 415. One
  // parser for every content type, refusing bodies nested deeper than any real request.
  app.removeContentTypeParser('application/json');
  const json = jsonBodyParser(deps.config.server.body_limit_bytes);
  app.addContentTypeParser('application/json', json);
  app.addContentTypeParser('*', json);

  // Every response carries its request id; API keys, rate limits and metering are the /v1 scopes' (v1-api.ts).
  app.addHook('onRequest', (request, reply, done) => {
    request.requestId = newRequestIds().requestId;
    reply.header('x-svc-request-id', request.requestId);
    done();
  });

  app.addHook('onResponse', async (request, reply) => {
    deps.metrics.response(request.method, request.routeOptions.url, reply.statusCode);
    warmCountingAfter(request);
    // Model requests are logged with their receipt (gateway.ts); the others here.
    if (deps.config.logging.requests && !request.lifecycle) request.log.info(responseLogLine(request, reply), 'request');
  });

  installErrorHandling(app, deps);
  closeConnectionsWhenClosing(app);
  registerHealthRoutes(app, deps);
  if (metricsPlacement(deps.config) === 'public-port') registerMetricsRoute(app, deps.metrics);
  registerV1Api(app, deps);
  registerResponsesSocket(app, deps);
  registerOpenApiRoute(app);
  registerConsoleApi(app, deps);
  registerConsolePages(app);
  // Before the app listens, not on each format's first request.
  compileBodyValidators();
  return app;
}
