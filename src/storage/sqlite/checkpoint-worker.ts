import type { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { statSync } from 'node:fs';
import { startThread } from '../../lib/thread-jobs.ts';

// Plain CommonJS so the worker needs no TypeScript loader.
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 5000');
// Copying WAL frames to the database needs no page cache to speak of.
db.pragma('cache_size = -256');
let quietMs = 0;
let lastFrames = -1;
const timer = setInterval(() => {
  try {
    const [{ busy, log, checkpointed }] = db.pragma('wal_checkpoint(PASSIVE)');
    // Quiet: nothing written since the last look, and all of it in the database file.
    quietMs = !busy && log === checkpointed && log === lastFrames ? quietMs + workerData.intervalMs : 0;
    lastFrames = log;
    if (quietMs < workerData.idleMs) return;
    // Give the WAL file back and stop. Not waiting for anyone: a connection busy now means not quiet after all.
    db.pragma('busy_timeout = 0');
    const [truncated] = db.pragma('wal_checkpoint(TRUNCATE)');
    db.pragma('busy_timeout = 5000');
    if (truncated.busy) return;
    clearInterval(timer);
    db.close();
    parentPort.postMessage('idle');
  } catch {}
}, workerData.intervalMs);
`;

export interface CheckpointWorker {
  /** Whether the worker thread is up (for tests). */
  readonly running: boolean;
  /** Worker threads started so far (for tests). */
  readonly starts: number;
  stop(): Promise<void>;
}

/**
 * Checkpoints the WAL from a worker thread. SQLite's automatic checkpoint runs inside a commit
 * on the event loop, with an fsync: a stall of several milliseconds every hundred requests.
 * Done here, it costs the request path nothing. A worker thread holds about 14 MiB, so it
 * starts only once the WAL passes `startAtWalBytes`, and once nothing was written for `idleMs`
 * it truncates the WAL file and stops: an idle gateway never holds it, and a WAL left large by
 * a process that stopped (SQLite never shrinks the file by itself) is emptied once. A thread that
 * fails is started again once the WAL is large again, after `retryAfterFailureMs`: meanwhile the
 * main connection's own automatic checkpoint (wal_autocheckpoint) bounds the WAL.
 */
export function startCheckpointWorker(
  path: string,
  intervalMs = 1_000,
  startAtWalBytes = 4 * 1024 * 1024,
  idleMs = 60_000,
  retryAfterFailureMs = 60_000,
): CheckpointWorker {
  let worker: Worker | null = null;
  let watch: NodeJS.Timeout | null = null;
  let retry: NodeJS.Timeout | null = null;
  let stopped = false;
  let starts = 0;
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');

  function watchWal(): void {
    watch = setInterval(() => {
      let walBytes: number;
      try {
        walBytes = statSync(`${path}-wal`).size;
      } catch {
        return;
      }
      if (walBytes < startAtWalBytes) return;
      clearInterval(watch!);
      watch = null;
      const started = startThread(WORKER_SOURCE, { eval: true, workerData: { path, intervalMs, idleMs, driver } });
      worker = started;
      starts++;
      started.unref();
      let idle = false;
      // A failure ends the thread: its exit below starts the watch again, after a pause.
      started.on('error', () => {});
      started.once('message', () => {
        idle = true;
        void started.terminate();
      });
      started.once('exit', () => {
        if (worker === started) worker = null;
        if (stopped) return;
        if (idle) return watchWal();
        retry = setTimeout(() => {
          retry = null;
          if (!stopped) watchWal();
        }, retryAfterFailureMs);
        retry.unref();
      });
    }, intervalMs);
    watch.unref();
  }
  watchWal();

  return {
    get running() {
      return worker !== null;
    },
    get starts() {
      return starts;
    },
    async stop() {
      stopped = true;
      if (watch) clearInterval(watch);
      if (retry) clearTimeout(retry);
      const running = worker;
      worker = null;
      await running?.terminate();
    },
  };
}
