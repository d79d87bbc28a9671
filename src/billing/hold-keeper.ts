import type { LedgerStore } from '../storage/ledger-store.ts';
import { ownerIsDead } from './hold-owner.ts';

/**
 * Keeps the holds of this process's live requests alive and reclaims those of dead processes:
 * at start, then every third of the hold TTL it extends the expiry of the holds whose requests
 * are still in flight (`live`, kept by the request meter from open to settled) and releases
 * (closing their receipts) every hold whose owner stopped renewing it or is known dead. A hold
 * whose settlement failed for good is no longer live: it expires and is recovered like the
 * hold of a dead process, never kept alive forever.
 */
export class HoldKeeper {
  private timer: NodeJS.Timeout | null = null;
  /** Receipt ids (= hold ids) of the requests this process has in flight. */
  readonly live = new Set<string>();

  constructor(
    private readonly store: LedgerStore,
    readonly owner: string,
    private readonly ttlMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  expiryFrom(now: number): string {
    return new Date(now + this.ttlMs).toISOString();
  }

  /** One round: renew ours, release orphans. Returns how many holds were released. */
  async sweep(now = Date.now()): Promise<number> {
    await this.store.extendHolds(this.owner, [...this.live], this.expiryFrom(now));
    const released = await this.store.releaseOrphanedHolds(new Date(now).toISOString(), (owner) => ownerIsDead(owner, this.owner));
    return released.length;
  }

  async start(): Promise<number> {
    const released = await this.sweep();
    this.timer = setInterval(() => this.sweep().catch(this.onError), Math.max(1_000, Math.floor(this.ttlMs / 3)));
    this.timer.unref();
    return released;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
