import { loadConfig } from './config/load-config.ts';
import { createGateway } from './gateway.ts';
import { describeStore, storeBackend } from './storage/open-store.ts';

/** `gateway start`: load config, open storage, listen, and shut down cleanly on SIGINT/SIGTERM. */
export async function startGateway(options: { configPath?: string } = {}): Promise<{ close(): Promise<void>; url: string }> {
  const config = loadConfig(options.configPath);
  const gateway = await createGateway(config);
  const { logger } = gateway.deps;
  const source = options.configPath ?? process.env.GATEWAY_CONFIG ?? 'built-in demo config (simulated provider)';
  logger.info({ url: gateway.url, config: source, database: describeStore(storeBackend(config)) }, `gateway listening on ${gateway.url}/v1`);
  logger.info(
    { console: `${gateway.deps.console.origin}/console`, domain: gateway.deps.console.domain },
    `console at ${gateway.deps.console.origin}/console (sign in with a wallet)`,
  );
  const shutdown = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    gateway.close().then(
      () => process.exit(0),
      (error) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
  return gateway;
}
