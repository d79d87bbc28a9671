import type { FastifyBaseLogger } from 'fastify';
import type { GatewayConfig } from '../config/schema.ts';
import type { ConsoleAccess } from '../auth/console-access.ts';
import type { KeyAuthenticator } from '../auth/key-authenticator.ts';
import type { AliasRulesSync } from '../routing/alias-rules-sync.ts';
import type { FixRunner } from '../fix/fix-runner.ts';
import type { RequestMeter } from '../billing/request-meter.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';
import type { ProviderRegistry } from '../providers/provider-registry.ts';
import type { ModelCatalog } from '../routing/model-catalog.ts';
import type { ModelHealth } from '../routing/model-health.ts';
import type { GatewayMetrics } from '../metrics/gateway-metrics.ts';
import type { Store } from '../storage/store.ts';
import type { Tracing } from '../telemetry/tracing.ts';
import type { Readiness } from './readiness.ts';

/** Everything the HTTP app needs, built once in gateway.ts (or by a test). */
export interface GatewayDeps {
  config: GatewayConfig;
  catalog: ModelCatalog;
  store: Store;
  keys: KeyAuthenticator;
  meter: RequestMeter;
  providers: ProviderRegistry;
  rateLimiter: RateLimiter;
  logger: FastifyBaseLogger;
  health: ModelHealth;
  metrics: GatewayMetrics;
  fix: FixRunner;
  /** The console's sign-in: settings, nonces, sessions. */
  console: ConsoleAccess;
  /** Keeps the catalog's aliases on the console's rules. */
  rules: AliasRulesSync;
  /** The keys-and-rules change version now (read from the shared signal). */
  keyVersion: () => Promise<string>;
  /** The checks behind /ready: database and Redis. */
  readiness: Readiness;
  /** Traces of model requests (OTEL_* variables); null when tracing is off. */
  tracing: Tracing | null;
  /** Milliseconds since the epoch; tests move it (quote expiry). */
  now: () => number;
}
