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
import { openSharedState } from './cache/shared-state.ts';

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
  options: { logger?: FastifyBaseLogger; /** How long close() lets requests in flight finish. */ drainMs?: number } = {},
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
  const deps: GatewayDeps = {
    config,
    catalog: new ModelCatalog(config),
    store,
    keys: new KeyAuthenticator(store, shared.keyVersion),
    meter: new RequestMeter(store, holdKeeper),
    providers,
    rateLimiter: redis ? createRedisRateLimiter(redis) : createMemoryRateLimiter(),
    logger,
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
  let closing: Promise<void> | null = null;
  return {
    app,
    deps,
    url: `http://${host}:${port}`,
    close: () =>
      (closing ??= (async () => {
        // Let requests in flight finish for a while, then cut them: they settle as cancelled.
        const deadline = setTimeout(() => app.server.closeAllConnections(), options.drainMs ?? 10_000);
        await app.close();
        clearTimeout(deadline);
        await deps.meter.drain();
        holdKeeper.stop();
        await deps.rateLimiter.close();
        await providers.close();
        await shared.close();
      })()),
  };
}
