import type { Store } from '../storage/store.ts';
import { ownerIsDead } from './hold-owner.ts';

/**
 * Keeps this process's holds alive and reclaims those of dead processes: at start, then every
 * third of the hold TTL it extends its own holds' expiry and releases (closing their receipts)
 * every hold whose owner stopped renewing or is known dead.
 */
export class HoldKeeper {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: Store,
    readonly owner: string,
    private readonly ttlMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  expiryFrom(now: number): string {
    return new Date(now + this.ttlMs).toISOString();
  }

  /** One round: renew ours, release orphans. Returns how many holds were released. */
  async sweep(now = Date.now()): Promise<number> {
    await this.store.extendHolds(this.owner, this.expiryFrom(now));
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
