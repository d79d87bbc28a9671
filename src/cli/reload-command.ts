import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError, loadConfig, parsePort } from '../config/load-config.ts';
import { pidFilePath, reloadOutcomePath, type ReloadOutcome } from '../pid-file.ts';
import { CliError } from './cli-error.ts';
import { report, type OfflineContext } from './command-context.ts';

/** How long `gateway reload` waits for the gateway to say how the reload went. */
const OUTCOME_WAIT_MS = 10_000;

function readOutcome(path: string): ReloadOutcome | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as ReloadOutcome;
  } catch {
    return null;
  }
}

/**
 * `gateway reload`: finds the gateway listening on the config's port (or --port) by its pid file,
 * sends it SIGHUP, and waits for the outcome it writes: reloaded (exit 0) or refused, with the
 * reason (exit 1). The config is read here only to find the pid file; the gateway reads it itself.
 */
export async function reloadGateway(context: OfflineContext): Promise<void> {
  let config;
  try {
    config = loadConfig(context.options.config);
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(`${error.message}\n(nothing was sent: the gateway keeps its config)`, 2, false);
    throw error;
  }
  const port = context.options.port === undefined ? config.server.port : parsePort(context.options.port, '--port');
  const pidFile = pidFilePath(config, port);
  let pid: number;
  try {
    pid = Number(readFileSync(pidFile, 'utf8').trim());
  } catch {
    throw new CliError(`no gateway found on port ${port}: no pid file at ${pidFile} (is it running? --port names another)`);
  }
  const outcomeFile = reloadOutcomePath(pidFile);
  const sentAt = Date.now();
  try {
    process.kill(pid, 'SIGHUP');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(code === 'ESRCH' ? `no gateway runs as pid ${pid} (a stale pid file at ${pidFile})` : `cannot signal pid ${pid}: ${code}`);
  }
  for (let waited = 0; waited < OUTCOME_WAIT_MS; waited += 50) {
    const outcome = readOutcome(outcomeFile);
    if (outcome && (outcome.at ?? 0) >= sentAt) {
      if (!outcome.ok) throw new CliError(`the gateway (pid ${pid}) refused the config and keeps the one it runs: ${outcome.reason}`);
      const kept = outcome.keptUntilRestart ?? [];
      report(
        context,
        { pid, port, reloaded: true, kept_until_restart: kept },
        () => `Gateway pid ${pid} on port ${port} reloaded its config.${kept.length ? ` Changed but kept until a restart: ${kept.join(', ')}.` : ''}`,
      );
      return;
    }
    await sleep(50);
  }
  throw new CliError(`sent SIGHUP to pid ${pid}, which did not say how the reload went within ${OUTCOME_WAIT_MS / 1000} s (see its log)`);
}
