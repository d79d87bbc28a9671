import { ConfigError, loadConfigDetails, parsePort } from './config/load-config.ts';
import { skippedProviderMessage } from './config/provider-variables.ts';
import { createGateway } from './gateway.ts';
import { tuneHeapForServing } from './lib/serving-heap.ts';
import { describeStore, storeBackend } from './storage/open-store.ts';

export interface StartOptions {
  configPath?: string;
  /** --port and --host: over the config file and PORT / HOST. */
  port?: string;
  host?: string;
}

/** `gateway start`: load config, open storage, listen, and shut down gracefully on SIGTERM/SIGINT (a second one: at once). */
export async function startGateway(options: StartOptions = {}): Promise<{ close(): Promise<void>; url: string }> {
  const { config, unsetProviders } = loadConfigDetails(options.configPath, process.env, true);
  if (options.port !== undefined) config.server.port = parsePort(options.port, '--port');
  if (options.host !== undefined) {
    if (!options.host.trim()) throw new ConfigError('--host must name an address or host name, e.g. 127.0.0.1 or 0.0.0.0');
    config.server.host = options.host.trim();
  }
  const gateway = await createGateway(config);
  tuneHeapForServing(storeBackend(config).kind);
  const { logger } = gateway.deps;
  for (const skipped of unsetProviders) logger.warn({ provider: skipped.provider, variables: skipped.variables }, skippedProviderMessage(skipped));
  const source = options.configPath ?? process.env.GATEWAY_CONFIG ?? 'built-in demo config (simulated provider)';
  logger.info({ url: gateway.url, config: source, database: describeStore(storeBackend(config)) }, `gateway listening on ${gateway.url}/v1`);
  logger.info(
    { console: `${gateway.deps.console.origin}/console`, domain: gateway.deps.console.domain },
    `console at ${gateway.deps.console.origin}/console (sign in with a wallet)`,
  );
  // The first SIGTERM (or SIGINT) drains and closes; a second one exits at once, leaving the holds
  // of requests still in flight to be released by another process or the next start.
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now; holds still in flight are released by the next process');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    gateway.close().then(
      () => {
        logger.info('shut down');
        process.exit(0);
      },
      (error) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return gateway;
}
