/** One hold or settlement waiting for its batch: its JSON for gateway_apply_batch, and its own statement for running alone. */
export interface BatchedWrite<T> {
  json: Record<string, unknown>;
  /** The result from its element of the batch's answer. */
  fromBatch(result: Record<string, unknown>): T;
  /** Runs it alone (its own statement, its own transaction). */
  alone(): Promise<T>;
  /** A settlement: its batch may commit without waiting for the WAL flush when every write of it may (postgres-durability.ts). */
  flushLater?: boolean;
}

interface Queued {
  /** A write of the batch, or work that runs alone between two batches (exclusive). */
  write: BatchedWrite<unknown> | { exclusive: () => Promise<unknown> };
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Past this many operations a batch is sent and the rest wait for the next one. */
const MAX_BATCH = 256;
/**
 * Batches of one process out at once. More would write their receipts side by side (they take
 * turns only on the account rows, for the charges and the holds), but measured at
 * 50 requests in flight one process settles as many with one batch out as with two or four:
 * the batches just get smaller.
 */
const MAX_BATCHES_IN_FLIGHT = 1;

/**
 * Group commit for PostgreSQL, as the SQLite write batcher does it: the holds and settlements
 * of this process go to the database as one statement (schema/functions/gateway-apply-batch.sql), one
 * round trip and one transaction for the whole batch, which locks each account row once
 * instead of once per request.
 *
 * Invariants:
 * - At most MAX_BATCHES_IN_FLIGHT batches of this process are out at a time. A write arriving
 *   while fewer are out is sent on the next turn of the event loop (with the others of that
 *   turn): at concurrency 1 it waits for nothing. Writes arriving while all are out wait for
 *   the first to return and go together in the next.
 * - Each write's outcome is its own: when the batch fails (one bad write, or the connection
 *   broke), every write of it runs again alone, so only the bad one fails. Running again is
 *   safe even when the failed batch did commit and only its reply was lost: a hold or a
 *   receipt whose id is already there is not written again.
 * - Writes are applied in the order they were queued; a request's settlement is always queued
 *   after its hold resolved, so it never overtakes it.
 * - Exclusive work (renewing a balance lease) runs with no batch of this process out, so every
 *   write it follows has committed and been answered, and none commits while it runs.
 * - A batch of settlements only commits without waiting for the WAL flush (postgres-durability.ts
 *   says what is kept); a batch with a hold in it waits for the flush, as a hold must be on disk
 *   before the provider is called.
 */
export class PostgresGroupCommit {
  private queued: Queued[] = [];
  private inFlight = 0;
  private scheduled = false;
  /** Batches sent and writes in them, for the bench's per-request database work. */
  readonly stats = { batches: 0, writes: 0, fallbacks: 0 };

  /** `send` runs gateway_apply_batch over `ops` (one result per op, in order), without waiting for the flush when `flushLater`. */
  constructor(private readonly send: (ops: Array<Record<string, unknown>>, flushLater: boolean) => Promise<Array<Record<string, unknown>>>) {}

  run<T>(write: BatchedWrite<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queued.push({ write, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  /** Runs `work` alone, after the writes queued before it and before those queued after. */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queued.push({ write: { exclusive: work }, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.inFlight >= MAX_BATCHES_IN_FLIGHT || this.scheduled || this.queued.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.inFlight >= MAX_BATCHES_IN_FLIGHT || this.queued.length === 0) return;
    const exclusiveAt = this.queued.findIndex((queued) => 'exclusive' in queued.write);
    const batch = this.queued.splice(0, exclusiveAt === 0 ? 1 : Math.min(MAX_BATCH, exclusiveAt < 0 ? MAX_BATCH : exclusiveAt));
    this.inFlight++;
    try {
      if (batch.length === 1) await settleAlone(batch[0]!);
      else await this.sendBatch(batch as Array<Queued & { write: BatchedWrite<unknown> }>);
    } finally {
      this.inFlight--;
      this.schedule();
    }
  }

  private async sendBatch(batch: Array<Queued & { write: BatchedWrite<unknown> }>): Promise<void> {
    this.stats.batches++;
    this.stats.writes += batch.length;
    let results: Array<Record<string, unknown>>;
    try {
      results = await this.send(
        batch.map((queued) => queued.write.json),
        batch.every((queued) => queued.write.flushLater === true),
      );
    } catch {
      this.stats.fallbacks++;
      // Alone, in order: a settlement still follows the hold it releases.
      for (const queued of batch) await settleAlone(queued);
      return;
    }
    batch.forEach((queued, index) => {
      try {
        queued.resolve(queued.write.fromBatch(results[index]!));
      } catch (error) {
        queued.reject(error);
      }
    });
  }
}

async function settleAlone(queued: Queued): Promise<void> {
  try {
    const { write } = queued;
    queued.resolve(await ('exclusive' in write ? write.exclusive() : write.alone()));
  } catch (error) {
    queued.reject(error);
  }
}
