import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startCheckpointWorker } from './checkpoint-worker.ts';

/** A WAL database whose commits stay in the WAL until something checkpoints it. */
function walDatabase(): { path: string; db: Database.Database; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'checkpoint-'));
  const path = join(dir, 'gateway.db');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('wal_autocheckpoint = 0');
  db.exec('CREATE TABLE t (v TEXT)');
  db.pragma('wal_checkpoint(TRUNCATE)');
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  for (let i = 0; i < 200; i++) insert.run('x'.repeat(1_000));
  return { path, db, cleanup: () => (db.close(), rmSync(dir, { recursive: true, force: true })) };
}

async function until(condition: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((resolve) => setTimeout(resolve, 20))) if (condition()) return true;
  return condition();
}

test('a WAL past the threshold is checkpointed into the database file', async () => {
  const { path, cleanup } = walDatabase();
  const before = statSync(path).size;
  const checkpoints = startCheckpointWorker(path, 50, 1);
  try {
    assert.ok(await until(() => statSync(path).size > before, 5_000), 'the rows reached the database file');
  } finally {
    await checkpoints.stop();
    cleanup();
  }
});

test('below the threshold no checkpoint runs (no worker thread is started)', async () => {
  const { path, cleanup } = walDatabase();
  const before = statSync(path).size;
  const checkpoints = startCheckpointWorker(path, 50, 1024 * 1024 * 1024);
  try {
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(statSync(path).size, before);
  } finally {
    await checkpoints.stop();
    cleanup();
  }
});

test('once nothing is written for a while, the WAL file is emptied and the thread stops; more writes start it again', async () => {
  const { path, db, cleanup } = walDatabase();
  const checkpoints = startCheckpointWorker(path, 20, 1, 200);
  try {
    assert.ok(await until(() => checkpoints.running, 5_000), 'a worker started for the WAL');
    assert.ok(await until(() => statSync(`${path}-wal`).size === 0 && !checkpoints.running, 5_000), 'the WAL file emptied, the worker gone');
    const before = statSync(path).size;
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    for (let i = 0; i < 200; i++) insert.run('y'.repeat(1_000));
    assert.ok(await until(() => statSync(path).size > before, 5_000), 'a new worker checkpointed the new rows');
    assert.equal(db.prepare('SELECT count(*) FROM t').pluck().get(), 400);
  } finally {
    await checkpoints.stop();
    cleanup();
  }
});

test('a thread that fails is started again once the WAL is large, after a pause, not in a loop', async () => {
  // A "database" the thread cannot open (a directory) beside a large WAL file: each thread fails at start.
  const dir = mkdtempSync(join(tmpdir(), 'checkpoint-'));
  const path = join(dir, 'gateway.db');
  mkdirSync(path);
  writeFileSync(`${path}-wal`, Buffer.alloc(64 * 1024));
  const checkpoints = startCheckpointWorker(path, 20, 1, 200, 400);
  try {
    assert.ok(await until(() => checkpoints.starts >= 2, 5_000), 'the failed thread was started again');
    const startsThen = checkpoints.starts;
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Without the pause a thread would start every 20 ms (about 15 in 300 ms).
    assert.ok(checkpoints.starts <= startsThen + 1, `${checkpoints.starts - startsThen} more starts in 300 ms`);
  } finally {
    await checkpoints.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
