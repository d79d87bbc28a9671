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
import { currentAlerts } from './limits/account-alerts.ts';
import { throttled } from './lib/throttled.ts';
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
  /**
   * Swap in `next`'s providers, models, aliases, model rules, routing, limits and logging at once:
   * requests in flight finish on the config they began with, new ones use the new one. Settings
   * only a restart changes (server, database, metrics, console, health, limits.hold_ttl_seconds)
   * stay as they are; their names are returned. Rejects, keeping the running config, when the new
   * one cannot be put together (the console's rules cannot be read for it).
   */
  reload(next: GatewayConfig): Promise<{ keptUntilRestart: string[] }>;
  close(): Promise<void>;
}

/** Config sections (or keys) a reload leaves as they are: each is read once, at start. */
const RESTART_ONLY = ['server', 'database', 'metrics', 'console', 'health'] as const;

/** `next` with what only a restart changes taken from `running`, and the names of those that differ. */
function reloadable(running: GatewayConfig, next: GatewayConfig): { config: GatewayConfig; kept: string[] } {
  const kept: string[] = RESTART_ONLY.filter((section) => JSON.stringify(running[section]) !== JSON.stringify(next[section]));
  if (running.limits.hold_ttl_seconds !== next.limits.hold_ttl_seconds) kept.push('limits.hold_ttl_seconds');
  const config: GatewayConfig = { ...next, limits: { ...next.limits, hold_ttl_seconds: running.limits.hold_ttl_seconds } };
  for (const section of RESTART_ONLY) (config as Record<string, unknown>)[section] = running[section];
  return { config, kept };
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
  // Every error of a dependency is a log line of its own (never ioredis's plain-text default).
  const redisError = throttled((error: unknown, skipped: number) => logger.error({ err: error, dependency: 'redis', skipped }, 'redis unreachable'));
  const shared = await openSharedState(config, process.env, {
    onRedisError: redisError,
    onRedisReady: () => logger.info({ dependency: 'redis' }, 'redis reachable again'),
  });
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
    board: redis
      ? redisCoolDownBoard(redis, {
          onError: throttled((error: unknown, skipped: number) => logger.warn({ err: error, skipped }, 'model cool-downs could not be shared')),
        })
      : undefined,
  });
  let depsMade = false;
  const metrics: GatewayMetrics = new GatewayMetrics({
    // deps does not exist yet: its catalog once it does (a reload replaces it there).
    catalog: () => (depsMade ? deps.catalog : catalog),
    health,
    holdsInFlight: () => meter.inFlight,
    heldNano: async () => (await store.accountSummary(DEFAULT_ACCOUNT_ID, new Date().toISOString().slice(0, 7))).heldNano,
    alerts: () => currentAlerts(store, DEFAULT_ACCOUNT_ID, Date.now()),
    perKey: config.metrics.per_key,
    onLedgerError: (error) => logger.warn({ err: error }, 'metrics: the held amount could not be read; serving the last value'),
  });
  // Receipts feed the metrics and the request log as they are written: both agree with them.
  const meter = new RequestMeter(
    observeReceipts(store, (receipt) => {
      metrics.receipt(receipt);
      if (deps.config.logging.requests) logger.info(receiptLogLine(receipt), 'request');
    }),
    holdKeeper,
  );
  const now = options.now ?? Date.now;
  const tracing = await startTracing(process.env, config.providers, logger);
  const rules = new AliasRulesSync(store, catalog, DEFAULT_ACCOUNT_ID);
  await rules.sync(await shared.keyVersion());
  // A reload replaces config, catalog, providers and rules on deps; the fix runner reads them there.
  const fixDeps = {
    get config() {
      return deps.config;
    },
    get catalog() {
      return deps.catalog;
    },
    get providers() {
      return deps.providers;
    },
    store,
    meter,
    health,
    logger,
    now,
  };
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
    fix: new FixRunner(fixDeps),
    console: new ConsoleAccess(redis ? redisSignInNonces(redis) : storeSignInNonces(store), new ConsoleSessions(store, now), now),
    rules,
    tracing,
    keyVersion: shared.keyVersion,
    readiness: new Readiness(shared.probes, (probe, error) => logger.warn({ err: error, probe }, 'not ready')),
  };
  depsMade = true;
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
    // The registry of the config running at shutdown (those a reload retired close on their own).
    providers: { close: () => deps.providers.close() },
    closers: shared.closers,
  };
  let reloading: Promise<unknown> = Promise.resolve();
  const reload = async (next: GatewayConfig) => {
    const { config: merged, kept } = reloadable(deps.config, next);
    const nextCatalog = new ModelCatalog(merged);
    const nextProviders = new ProviderRegistry(merged);
    const nextRules = new AliasRulesSync(store, nextCatalog, DEFAULT_ACCOUNT_ID);
    try {
      // The console's rules apply to the new aliases before any request sees them.
      await nextRules.sync(await shared.keyVersion());
    } catch (error) {
      await nextProviders.close();
      throw error;
    }
    // One synchronous step: a request reads either the old set or the new one, never a mix.
    const retired = deps.providers;
    Object.assign(deps, { config: merged, catalog: nextCatalog, providers: nextProviders, rules: nextRules });
    retired.retire();
    for (const warning of merged.catalogWarnings) logger.warn(warning);
    return { keptUntilRestart: kept };
  };
  const times = { drainMs: options.drainMs ?? config.server.drain_ms, stepMs: config.server.close_timeout_ms };
  return {
    app,
    deps,
    url: `http://${host}:${port}`,
    metricsUrl: metricsServer?.url,
    // One reload at a time, in the order asked.
    reload: (next) => {
      const done = reloading.then(() => reload(next));
      reloading = done.catch(() => undefined);
      return done;
    },
    close: () => {
      health.board.close();
      return (closing ??= closeGateway(parts, times).finally(() => Promise.all([metricsServer?.close(), tracing?.shutdown().catch(() => {})])));
    },
  };
}
