import type { Database } from 'better-sqlite3';

interface QueuedWrite {
  run: () => unknown;
  resolve: (value: any) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Group commit: every write queued in one event-loop turn runs in a single IMMEDIATE
 * transaction, which costs little more than one write alone. Each write runs in its own
 * savepoint, so one that throws is undone alone and its caller alone gets the error.
 */
export class WriteBatcher {
  private queued: QueuedWrite[] = [];
  /** One transaction function for every batch: better-sqlite3 builds a wrapper per call to db.transaction. */
  private readonly writeBatch: (batch: QueuedWrite[], outcomes: Outcome[]) => void;

  constructor(db: Database) {
    const writeBatch = db.transaction((batch: QueuedWrite[], outcomes: Outcome[]) => {
      for (const write of batch) {
        try {
          outcomes.push({ ok: true, value: write.run() });
        } catch (error) {
          outcomes.push({ ok: false, error });
        }
      }
    });
    this.writeBatch = writeBatch.immediate;
  }

  /** Queue `work` (a better-sqlite3 transaction function: nested, it runs as a savepoint). */
  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queued.push({ run: work, resolve, reject });
      if (this.queued.length === 1) setImmediate(() => this.flush());
    });
  }

  /** Write everything queued now (also called before the database closes). */
  flush(): void {
    const batch = this.queued;
    this.queued = [];
    if (batch.length === 0) return;
    const outcomes: Outcome[] = [];
    try {
      this.writeBatch(batch, outcomes);
    } catch (error) {
      // The commit itself failed (disk full, database closed): nothing of the batch was written.
      for (const write of batch) write.reject(error);
      return;
    }
    batch.forEach((write, index) => {
      const outcome = outcomes[index]!;
      if (outcome.ok) write.resolve(outcome.value);
      else write.reject(outcome.error);
    });
  }
}
