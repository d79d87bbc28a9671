import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError, loadConfigDetails, parsePort } from './config/load-config.ts';
import { pidFilePath, removePidFile, writePidFile, writeReloadOutcome } from './pid-file.ts';
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
  // `gateway reload` finds the process by this file; it goes when the process exits.
  const pidFile = pidFilePath(config, (gateway.app.server.address() as AddressInfo).port);
  writePidFile(pidFile, logger);
  process.once('exit', () => removePidFile(pidFile));

  // SIGHUP re-reads the config file and swaps it in; a file that does not load is refused, the running config kept.
  const reload = async () => {
    let loaded;
    try {
      loaded = loadConfigDetails(options.configPath, process.env, true);
    } catch (error) {
      logger.error({ config: source, reason: (error as Error).message }, 'config reload refused; the running config is kept');
      writeReloadOutcome(pidFile, { ok: false, reason: (error as Error).message });
      return;
    }
    try {
      const { keptUntilRestart } = await gateway.reload(loaded.config);
      for (const skipped of loaded.unsetProviders)
        logger.warn({ provider: skipped.provider, variables: skipped.variables }, skippedProviderMessage(skipped));
      if (keptUntilRestart.length)
        logger.warn({ settings: keptUntilRestart }, `config reloaded, except what only a restart changes: ${keptUntilRestart.join(', ')}`);
      logger.info({ config: source }, 'config reloaded');
      writeReloadOutcome(pidFile, { ok: true, keptUntilRestart });
    } catch (error) {
      logger.error({ config: source, err: error }, 'config reload failed; the running config is kept');
      writeReloadOutcome(pidFile, { ok: false, reason: (error as Error).message });
    }
  };
  process.on('SIGHUP', () => void reload());

  // The first SIGTERM (or SIGINT) drains and closes; a second one exits at once, leaving the holds
  // of requests still in flight to be released by another process or the next start. SIGTERM
  // first keeps serving for server.ready_grace_ms with /ready at 503, so that a load balancer
  // stops sending requests before the listener closes.
  let stopping = false;
  const onSignal = async (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now; holds still in flight are released by the next process');
      process.exit(1);
    }
    stopping = true;
    const graceMs = signal === 'SIGTERM' ? config.server.ready_grace_ms : 0;
    if (graceMs > 0) {
      gateway.deps.readiness.stopping = true;
      logger.info({ signal, ms: graceMs }, 'stopping: /ready answers 503 while requests are still served');
      await sleep(graceMs);
    }
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
  process.on('SIGINT', (signal) => void onSignal(signal));
  process.on('SIGTERM', (signal) => void onSignal(signal));
  return gateway;
}
