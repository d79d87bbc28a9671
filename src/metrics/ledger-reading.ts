import { settledWithin } from '../lib/deadline.ts';

/** How long a scrape waits for the ledger before it answers with the last value read. */
export const LEDGER_READ_MS = 500;

/**
 * A value read off the ledger when scraped, kept for when the ledger does not answer: a scrape
 * waits at most `waitMs` for a fresh read, then answers with the last value and says it is
 * stale. A read still running from an earlier scrape is not started again, so a database that
 * hangs never collects one stuck query per scrape.
 */
export class LedgerReading {
  private value = 0;
  /** When the value was last read, ms since the epoch; the reading's start until then. */
  private readAt: number;
  private fresh = false;
  private running: Promise<void> | null = null;

  constructor(
    private readonly read: () => Promise<number>,
    private readonly onError: (error: unknown) => void = () => {},
    private readonly waitMs = LEDGER_READ_MS,
    private readonly now: () => number = Date.now,
  ) {
    this.readAt = now();
  }

  /** Read again, within `waitMs`; afterwards `current` says what came of it. */
  async refresh(): Promise<void> {
    this.running ??= this.read().then(
      (value) => {
        this.value = value;
        this.readAt = this.now();
        this.fresh = true;
      },
      (error: unknown) => {
        this.fresh = false;
        this.onError(error);
      },
    );
    const running = this.running;
    void running.finally(() => {
      if (this.running === running) this.running = null;
    });
    if (!(await settledWithin(running, this.waitMs))) this.fresh = false;
  }

  /** The last value read, whether this scrape's read succeeded, and seconds since the value was read. */
  current(): { value: number; up: boolean; ageSeconds: number } {
    return { value: this.value, up: this.fresh, ageSeconds: Math.max(0, this.now() - this.readAt) / 1000 };
  }
}
