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
import { FixRunner } from './fix/fix-runner.ts';
import { ConsoleAccess, resolveConsoleSettings } from './auth/console-access.ts';
import { ConsoleSessions } from './auth/console-sessions.ts';
import { redisSignInNonces, storeSignInNonces } from './auth/sign-in-nonces.ts';
import { AliasRulesSync } from './routing/alias-rules-sync.ts';
import { DEFAULT_ACCOUNT_ID } from './storage/store.ts';
import { openSharedState } from './open-shared-state.ts';

export interface RunningGateway {
  app: FastifyInstance;
  deps: GatewayDeps;
  /** Base address, e.g. http://127.0.0.1:8787 (the API is under /v1). */
  url: string;
  close(): Promise<void>;
}

/** Build every dependency from a validated config and listen. Tests call this with port 0. */
export async function createGateway(
  config: GatewayConfig,
  options: {
    logger?: FastifyBaseLogger;
    /** How long close() lets requests, streams and fix runs in flight finish. */
    drainMs?: number;
    /** Milliseconds since the epoch, for what expires (fix quotes); tests move it. */
    now?: () => number;
  } = {},
): Promise<RunningGateway> {
  const logger = options.logger ?? (pino({ level: process.env.LOG_LEVEL ?? 'info' }) as unknown as FastifyBaseLogger);
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
  const meter = new RequestMeter(store, holdKeeper);
  const health = new ModelHealth();
  const now = options.now ?? Date.now;
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
    now,
    fix: new FixRunner({ config, catalog, store, meter, providers, health, logger, now }),
    console: new ConsoleAccess(redis ? redisSignInNonces(redis) : storeSignInNonces(store), new ConsoleSessions(store, now), now),
    rules,
    keyVersion: shared.keyVersion,
  };
  const app = buildApp(deps);
  try {
    await app.listen({ host: config.server.host, port: config.server.port });
  } catch (error) {
    holdKeeper.stop();
    await providers.close();
    await shared.close();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.server.port;
  const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  deps.console.configure(resolveConsoleSettings(config, { host, port }));
  let closing: Promise<void> | null = null;
  return {
    app,
    deps,
    url: `http://${host}:${port}`,
    close: () =>
      (closing ??= (async () => {
        // Let requests and fix runs in flight finish for a while, then cut them: requests settle
        // as cancelled, runs as failed, each charged for the calls it made.
        let cut = () => {};
        const cutting = new Promise<void>((resolve) => (cut = resolve));
        const deadline = setTimeout(() => {
          app.server.closeAllConnections();
          cut();
        }, options.drainMs ?? 10_000);
        const runsClosed = deps.fix.close(cutting);
        await app.close();
        await runsClosed;
        clearTimeout(deadline);
        await deps.meter.drain();
        holdKeeper.stop();
        await deps.rateLimiter.close();
        await providers.close();
        await shared.close();
      })()),
  };
}
