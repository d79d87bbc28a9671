import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { statSync } from 'node:fs';

// Plain CommonJS so the worker needs no TypeScript loader.
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 5000');
setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {}
}, workerData.intervalMs);
`;

/**
 * Checkpoints the WAL from a worker thread. SQLite's automatic checkpoint runs inside a commit
 * on the event loop, with an fsync: a stall of several milliseconds every hundred requests.
 * Done here, it costs the request path nothing. A worker thread holds about 14 MiB, so it
 * starts only once the WAL passes `startAtWalBytes`: an idle gateway never needs it.
 */
export function startCheckpointWorker(path: string, intervalMs = 1_000, startAtWalBytes = 4 * 1024 * 1024): { stop(): Promise<void> } {
  let worker: Worker | null = null;
  const watch = setInterval(() => {
    let walBytes: number;
    try {
      walBytes = statSync(`${path}-wal`).size;
    } catch {
      return;
    }
    if (walBytes < startAtWalBytes) return;
    clearInterval(watch);
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, intervalMs, driver } });
    worker.unref();
    worker.on('error', () => {
      // The main connection's own (rarer) automatic checkpoint still bounds the WAL.
    });
  }, intervalMs);
  watch.unref();
  return {
    async stop() {
      clearInterval(watch);
      await worker?.terminate();
    },
  };
}
