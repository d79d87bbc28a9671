/**
 * A flush is started this long after the first settlement waiting for it: under load it then
 * covers several batches (one barrier transaction and one journal removal for all of them, not
 * one per batch; at 5 ms barriers were still most of the 0.12 to 0.32 transactions per request
 * measured). Nobody waits for it but the journal entries.
 */
const FLUSH_DELAY_MS = 50;

/**
 * Settlements on PostgreSQL commit without waiting for the WAL flush (synchronous_commit off, on a
 * pool of their own: postgres-database.ts); this confirms, tens of milliseconds later and off the
 * request's path, that they reached the disk.
 *
 * The guarantee kept, and why it is enough:
 * - A request's answer waits for its settlement's commit, not its flush. Once committed, the
 *   receipt is visible to every session, so GET /v1/receipts/:id finds it on any process as soon
 *   as the answer (with its x-svc-receipt-id) is out, as before.
 * - A gateway process dying loses nothing: a commit that returned is in PostgreSQL's WAL buffers,
 *   which PostgreSQL writes out whatever becomes of the client. Only PostgreSQL itself (or its
 *   host) stopping within the flush delay can lose a commit: the embedded mode's SQLite
 *   (synchronous NORMAL) has the same window on power loss.
 * - The receipt's hold record (its hold journal entry, postgres-hold-journal.ts) is removed only
 *   once its commit is confirmed on disk. A commit lost with the server is settled again from this
 *   process, synchronously (settling is idempotent: one receipt, one charge whether or not the
 *   first commit survived); and if this process dies too, the journal entry is still there for a
 *   survivor, who charges the request's estimate as for any process that died mid-request. A
 *   barrier that finds the server restarted since the last one counts as failed (on a new
 *   connection it would pass while commits made before the restart are gone).
 * - No overspend in the window: the receipt and its charge commit together or are lost together,
 *   and a charge lost and settled again goes to the account as any charge outside a lease, while
 *   the lease keeps reserving its room until its next renewal reads the lease back.
 *
 * Holds are not committed this way: a hold decided against the account row must be on disk
 * before the provider is called (postgres-group-commit.ts sends a batch with any hold in it
 * synchronously).
 */
export class FlushBarrier {
  /** Callers waiting for a flush not yet started: it starts after they called, so it covers their commits. */
  private waiting: { promise: Promise<void>; resolve: () => void; reject: (error: unknown) => void } | null = null;
  private running = false;
  private scheduled = false;

  constructor(
    private readonly flush: () => Promise<void>,
    private readonly delayMs = FLUSH_DELAY_MS,
  ) {}

  /** Resolves once every commit that returned before this call is on disk; rejects when that could not be confirmed. */
  flushed(): Promise<void> {
    if (!this.waiting) {
      let resolve!: () => void;
      let reject!: (error: unknown) => void;
      const promise = new Promise<void>((yes, no) => {
        resolve = yes;
        reject = no;
      });
      this.waiting = { promise, resolve, reject };
    }
    this.schedule();
    return this.waiting.promise;
  }

  /** FLUSH_DELAY_MS on, so the settlements of several batches share one flush. */
  private schedule(): void {
    if (this.running || this.scheduled || !this.waiting) return;
    this.scheduled = true;
    setTimeout(() => {
      this.scheduled = false;
      this.start();
    }, this.delayMs);
  }

  private start(): void {
    if (this.running || !this.waiting) return;
    const waiting = this.waiting;
    this.waiting = null;
    this.running = true;
    this.flush()
      .then(waiting.resolve, waiting.reject)
      .finally(() => {
        this.running = false;
        this.schedule();
      });
  }
}
