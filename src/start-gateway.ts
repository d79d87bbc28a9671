import { loadConfig } from './config/load-config.ts';
import { createGateway } from './gateway.ts';
import { tuneHeapForServing } from './lib/serving-heap.ts';
import { describeStore, storeBackend } from './storage/open-store.ts';

/** `gateway start`: load config, open storage, listen, and shut down gracefully on SIGTERM/SIGINT (a second one: at once). */
export async function startGateway(options: { configPath?: string } = {}): Promise<{ close(): Promise<void>; url: string }> {
  const config = loadConfig(options.configPath);
  const gateway = await createGateway(config);
  tuneHeapForServing(storeBackend(config).kind);
  const { logger } = gateway.deps;
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
