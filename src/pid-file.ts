import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { GatewayConfig } from './config/schema.ts';

/**
 * A running gateway writes its pid to `gateway-<port>.pid` beside its SQLite file (the directory
 * of database.path, ./data by default), so `gateway reload` finds it by the port it listens on.
 * The outcome of each reload goes to `gateway-<port>.reload` (JSON), which `gateway reload` waits for.
 */
export function pidFilePath(config: GatewayConfig, port: number | string): string {
  return join(dirname(config.database.path), `gateway-${port}.pid`);
}

export function reloadOutcomePath(pidFile: string): string {
  return pidFile.replace(/\.pid$/, '.reload');
}

export interface ReloadOutcome {
  ok: boolean;
  reason?: string;
  keptUntilRestart?: string[];
  /** Epoch ms it was written. */
  at?: number;
}

/** Never fatal: without the file, SIGHUP to the pid still reloads. */
export function writePidFile(path: string, logger: FastifyBaseLogger): void {
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `${process.pid}\n`);
  } catch (error) {
    logger.warn({ err: error, path }, 'could not write the pid file: `gateway reload` will not find this process (send it SIGHUP)');
  }
}

/** Removes the pid file, and the reload outcome beside it, if they are still this process's. */
export function removePidFile(path: string): void {
  try {
    if (readFileSync(path, 'utf8').trim() !== String(process.pid)) return;
    rmSync(path, { force: true });
    rmSync(reloadOutcomePath(path), { force: true });
  } catch {
    // Gone already.
  }
}

export function writeReloadOutcome(pidFile: string, outcome: ReloadOutcome): void {
  try {
    writeFileSync(reloadOutcomePath(pidFile), JSON.stringify({ ...outcome, at: Date.now() }));
  } catch {
    // The log has it too.
  }
}
