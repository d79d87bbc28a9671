import pino from 'pino';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import { KeyAuthenticator } from './auth/key-authenticator.ts';
import { HoldKeeper } from './billing/hold-keeper.ts';
import { newHoldOwner } from './billing/hold-owner.ts';
import { RequestMeter } from './billing/request-meter.ts';
import type { GatewayConfig } from './config/schema.ts';
import type { GatewayDeps } from './http/gateway-deps.ts';
import { createMemoryRateLimiter } from './limits/memory-rate-limiter.ts';
import { createRedisRateLimiter } from './limits/redis-rate-limiter.ts';
import { ProviderRegistry } from './providers/provider-registry.ts';
import { ModelCatalog } from './routing/model-catalog.ts';
import { ModelHealth } from './routing/model-health.ts';
import { redisCoolDownBoard } from './routing/redis-cool-down-board.ts';
import { FixRunner } from './fix/fix-runner.ts';
import { ConsoleAccess, resolveConsoleSettings } from './auth/console-access.ts';
import { ConsoleSessions } from './auth/console-sessions.ts';
import { redisSignInNonces } from './auth/redis-sign-in-nonces.ts';
import { storeSignInNonces } from './auth/sign-in-nonces.ts';
import { AliasRulesSync } from './routing/alias-rules-sync.ts';
import { DEFAULT_ACCOUNT_ID } from './storage/store.ts';
import { closeGateway, trackConnections } from './close-gateway.ts';
import { Readiness } from './http/readiness.ts';
import { openSharedState } from './open-shared-state.ts';
import { GatewayMetrics } from './metrics/gateway-metrics.ts';
import { metricsPlacement, startMetricsServer } from './metrics/metrics-routes.ts';
import { observeReceipts } from './metrics/observe-receipts.ts';
import { receiptLogLine } from './metrics/request-log.ts';
import { logDestination } from './metrics/log-destination.ts';
import { startTracing } from './telemetry/tracing.ts';

export interface RunningGateway {
  app: FastifyInstance;
  deps: GatewayDeps;
  /** Base address, e.g. http://127.0.0.1:8787 (the API is under /v1). */
  url: string;
  /** Where /metrics is served when config metrics.port gives it a port of its own. */
  metricsUrl?: string;
  close(): Promise<void>;
}

/** Build every dependency from a validated config and listen. Tests call this with port 0. */
export async function createGateway(
  config: GatewayConfig,
  options: {
    logger?: FastifyBaseLogger;
    /** How long close() lets requests, streams and fix runs in flight finish (default: server.drain_ms). */
    drainMs?: number;
    /** Milliseconds since the epoch, for what expires (fix quotes); tests move it. */
    now?: () => number;
  } = {},
): Promise<RunningGateway> {
  const logger = options.logger ?? (pino({ level: process.env.LOG_LEVEL ?? 'info' }, ...logDestination()) as unknown as FastifyBaseLogger);
  // DATABASE_URL and REDIS_URL make the ledger, keys and rate limits shared by every process.
  const shared = await openSharedState(config);
  const { store, redis } = shared;
  const providers = new ProviderRegistry(config);
  const holdKeeper = new HoldKeeper(store, newHoldOwner(), config.limits.hold_ttl_seconds * 1000, (error) =>
    logger.error({ err: error }, 'hold upkeep failed'),
  );
  const released = await holdKeeper.start();
  if (released) logger.warn({ released }, 'released holds left by a stopped gateway process; their receipts are closed');
  const catalog = new ModelCatalog(config);
  for (const warning of config.catalogWarnings) logger.warn(warning);
  const health = new ModelHealth({
    failuresToCool: config.health.failures_to_cool,
    coolDownMs: config.health.cool_down_seconds * 1000,
    maxCoolDownMs: config.health.max_cool_down_seconds * 1000,
    // With Redis, a model one process saw fail is skipped by all of them.
    board: redis ? redisCoolDownBoard(redis, { onError: (error) => logger.warn({ err: error }, 'model cool-downs could not be shared') }) : undefined,
  });
  const metrics: GatewayMetrics = new GatewayMetrics({
    catalog: () => catalog,
    health,
    holdsInFlight: () => meter.inFlight,
    heldNano: async () => (await store.accountSummary(DEFAULT_ACCOUNT_ID, new Date().toISOString().slice(0, 7))).heldNano,
    perKey: config.metrics.per_key,
    onLedgerError: (error) => logger.warn({ err: error }, 'metrics: the held amount could not be read; serving the last value'),
  });
  // Receipts feed the metrics and the request log as they are written: both agree with them.
  const meter = new RequestMeter(
    observeReceipts(store, (receipt) => {
      metrics.receipt(receipt);
      if (config.logging.requests) logger.info(receiptLogLine(receipt), 'request');
    }),
    holdKeeper,
  );
  const now = options.now ?? Date.now;
  const tracing = await startTracing(process.env, config.providers, logger);
  const rules = new AliasRulesSync(store, catalog, DEFAULT_ACCOUNT_ID);
  await rules.sync(await shared.keyVersion());
  const deps: GatewayDeps = {
    config,
    catalog,
    store,
    keys: new KeyAuthenticator(store, shared.keyVersion),
    meter,
    providers,
    rateLimiter: redis ? createRedisRateLimiter(redis) : createMemoryRateLimiter(),
    logger,
    health,
    metrics,
    now,
    fix: new FixRunner({ config, catalog, store, meter, providers, health, logger, now }),
    console: new ConsoleAccess(redis ? redisSignInNonces(redis) : storeSignInNonces(store), new ConsoleSessions(store, now), now),
    rules,
    tracing,
    keyVersion: shared.keyVersion,
    readiness: new Readiness(shared.probes, (probe, error) => logger.warn({ err: error, probe }, 'not ready')),
  };
  const app = buildApp(deps);
  try {
    await app.listen({ host: config.server.host, port: config.server.port });
  } catch (error) {
    holdKeeper.stop();
    health.board.close();
    await providers.close();
    await shared.close();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.server.port;
  const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  deps.console.configure(resolveConsoleSettings(config, { host, port }));
  const placement = metricsPlacement(config);
  const metricsServer = placement === 'own-port' ? await startMetricsServer(metrics, config.metrics.host, config.metrics.port!) : null;
  if (placement === 'none' && config.metrics.enabled)
    logger.warn('/metrics is not served: server.host is not a loopback address; set metrics.port (a port of its own) or metrics.public: true');
  let closing: Promise<void> | null = null;
  const parts = {
    app,
    connections: trackConnections(app.server),
    logger,
    meter,
    fix: deps.fix,
    holdKeeper,
    store,
    rateLimiter: deps.rateLimiter,
    providers,
    closers: shared.closers,
  };
  const times = { drainMs: options.drainMs ?? config.server.drain_ms, stepMs: config.server.close_timeout_ms };
  return {
    app,
    deps,
    url: `http://${host}:${port}`,
    metricsUrl: metricsServer?.url,
    close: () => {
      health.board.close();
      return (closing ??= closeGateway(parts, times).finally(() => Promise.all([metricsServer?.close(), tracing?.shutdown().catch(() => {})])));
    },
  };
}
