import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';

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
 * Done here, it costs the request path nothing.
 */
export function startCheckpointWorker(path: string, intervalMs = 1_000): { stop(): Promise<void> } {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, intervalMs, driver } });
  worker.unref();
  worker.on('error', () => {
    // The main connection's own (rarer) automatic checkpoint still bounds the WAL.
  });
  return {
    async stop() {
      await worker.terminate();
    },
  };
}
