import type { Database } from 'better-sqlite3';

interface QueuedWrite {
  run: () => unknown;
  resolve: (value: any) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: every write queued in one event-loop turn runs in a single IMMEDIATE
 * transaction, which costs little more than one write alone. Each write runs in its own
 * savepoint, so one that throws is undone alone and its caller alone gets the error.
 */
export class WriteBatcher {
  private queued: QueuedWrite[] = [];

  constructor(private readonly db: Database) {}

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
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      this.db
        .transaction(() => {
          for (const write of batch) {
            try {
              outcomes.push({ ok: true, value: write.run() });
            } catch (error) {
              outcomes.push({ ok: false, error });
            }
          }
        })
        .immediate();
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
