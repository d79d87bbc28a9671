import { randomBytes } from 'node:crypto';
import type { HoldRecord } from '../records.ts';

/** A lease is sized for this many holds like the one that asked for it. */
const HOLDS_PER_LEASE = 256;

/** The lease as the database returned it on its last renewal; id null: none (never taken, handed back or recovered). */
export interface RenewedLease {
  leaseId: string | null;
  grantedNano: number;
  chargedNano: number;
}

/** Asks the database to take, top up, renew, shrink or hand back a lease (schema/functions/gateway-renew-lease.sql). */
export type RenewLease = (request: LeaseRenewal) => Promise<RenewedLease>;

/** What a renewal asks of gateway_renew_lease. */
export interface LeaseRenewal {
  leaseId: string | null;
  newId: string;
  accountId: string;
  owner: string;
  month: string;
  targetNano: number;
  keepNano: number;
  expiresAt: string;
  /** A key lease: also a slice of this key's limit on this UTC day; null for a balance lease. */
  keyId: string | null;
  day: string | null;
  dailyLimitNano: number | null;
}

/** What a lease is for: an account's month, and for a key lease one key's day under one limit. */
interface LeaseScope {
  accountId: string;
  month: string;
  owner: string;
  keyId: string | null;
  day: string | null;
  dailyLimitNano: number | null;
}

interface Lease extends LeaseScope {
  id: string | null;
  /** Totals as in balance_leases: granted as of the last renewal, charged as counted here since. */
  grantedNano: number;
  chargedNano: number;
  /** Holds placed in it whose receipts have not committed yet. */
  heldNano: number;
  /** The reservation this process asks for. */
  targetNano: number;
  usedSinceRenewal: boolean;
  renewing: Promise<void> | null;
  /** This process's clock when its last successful renewal was sent, and the expiry it asked for (ms). */
  renewedAtMs: number;
  expiresAtMs: number;
}

/**
 * Balance leases of one process on PostgreSQL: holds without the account row.
 *
 * A lease (a balance_leases row, schema/baseline.sql) is a slice of an account's available balance and
 * of its month's budget, reserved by one process. The process places the holds of keys without a
 * daily limit inside it, checked here in memory; each is still recorded before the provider is
 * called (in the hold journal, postgres-hold-journal.ts, when there is one; else a holds row with
 * its lease_id, in the group commit), so a survivor recovers it and closes its receipt when this
 * process dies. A receipt of such a hold adds its cost to the lease's
 * charged total instead of the account's balance; the lease row belongs to this process alone,
 * so no two processes wait for each other on the request path. Renewals (on demand, when the
 * room runs low, and every sweep of the hold keeper) fold the charges into the account and resize
 * the reservation, taking the account row once per few hundred requests.
 *
 * Invariants:
 * - Room = granted - charged - held >= 0: the holds placed in a lease never pass its
 *   reservation, which other holds cannot use (gateway_available). So no hold, here or in any
 *   process, is placed against money another one reserved: no overspend.
 * - The balance everyone sees is accounts.balance_nano less the leases' charges not yet folded:
 *   a receipt and its charge commit together, so receipts always sum to the balance's change.
 * - Renewals run between two batches of this process (PostgresGroupCommit.exclusive): every
 *   receipt before it has committed and been answered, so the charged total it returns is exact.
 * - A lease is granted only when the account can spare 16 times it (balance and budget, besides
 *   the lease), and is handed back when a renewal finds it idle. Near the end of a balance or a
 *   budget, leases shrink to the holds in them and holds take the per-request path (a row lock
 *   per batch), which decides exactly as without leases.
 * - A key with a daily limit has key leases (one per key, UTC day and limit): a balance lease that
 *   also reserves that much of the key's day, granted only when the day can spare 16 times it
 *   besides everything else it used (charges, holds outside key leases, other key leases'
 *   reservations: schema/functions/gateway-key-day-used.sql). A hold of that key needs room in it, as
 *   any lease hold; near the limit the lease shrinks to its holds and holds take the per-request
 *   path, counted under the account row as before. A changed limit is another lease; the old one
 *   keeps only its holds and is handed back idle.
 * - A hold whose settlement failed for good (no longer in flight at two sweeps) is detached from
 *   the lease: an ordinary hold from then on, counted on its own until it expires and is
 *   recovered, so its room can go back to the lease without being used twice.
 * - A lease expires like a hold (renewed every sweep); one whose process died or stopped renewing
 *   is released by any survivor (gateway_release_lease): its charges folded, the holds still in it
 *   left as ordinary holds, recovered with their receipts as any other.
 * - `fresh` is true only in the first half of a lease's life as this process last renewed it
 *   (measured on its own clock from when the renewal was sent): a hold recorded outside the
 *   database (postgres-hold-journal.ts) is used only when its lease was fresh once the record
 *   was stored, so no survivor can have judged the lease expired and released it before.
 */
export class BalanceLeases {
  private readonly leases = new Map<string, Lease>();
  /** Holds placed in a lease, by id (= receipt id), until their receipt commits; `missed`: sweeps that did not find it live. */
  private readonly holds = new Map<string, { lease: Lease; amountNano: number; missed: number }>();

  constructor(
    private readonly renewLease: RenewLease,
    /** Runs renewals between batches (the group commit's exclusive turn). */
    private readonly exclusive: <T>(work: () => Promise<T>) => Promise<T>,
  ) {}

  /**
   * Room for `hold` in this process's lease (a key lease when the key has a daily limit), taking
   * or topping up the lease when needed; the lease id, or null (per-request path).
   */
  async reserve(hold: HoldRecord, dailyLimitNano: number | null = null): Promise<string | null> {
    const scope: LeaseScope = {
      accountId: hold.accountId,
      month: hold.month,
      owner: hold.owner,
      keyId: dailyLimitNano === null ? null : hold.keyId,
      day: dailyLimitNano === null ? null : hold.day,
      dailyLimitNano,
    };
    const key = leaseKey(scope);
    let lease = this.leases.get(key);
    if (!lease) {
      lease = emptyLease(scope);
      this.leases.set(key, lease);
    }
    lease.targetNano = Math.max(lease.targetNano, hold.amountNano * HOLDS_PER_LEASE);
    if (room(lease) < hold.amountNano) {
      // A renewal that fails leaves the hold to the per-request path, which tells the truth.
      await this.renew(lease, hold.expiresAt).catch(() => undefined);
      // Replaced meanwhile (recovered) or dropped (handed back idle): the current one, if any.
      lease = this.leases.get(key);
      if (!lease || room(lease) < hold.amountNano) return null;
    }
    lease.heldNano += hold.amountNano;
    lease.usedSinceRenewal = true;
    this.holds.set(hold.id, { lease, amountNano: hold.amountNano, missed: 0 });
    // Top up ahead of need, so requests seldom wait for a renewal.
    if (room(lease) < lease.targetNano / 2) this.renew(lease, hold.expiresAt).catch(() => undefined);
    return lease.id;
  }

  /** The lease a hold was placed in (its receipt charges it), or null. */
  leaseOf(holdId: string): string | null {
    return this.holds.get(holdId)?.lease.id ?? null;
  }

  /** Whether the lease of `holdId` is in the first half of its life (see the invariants). */
  fresh(holdId: string, nowMs = Date.now()): boolean {
    const lease = this.holds.get(holdId)?.lease;
    if (!lease || lease.id === null) return false;
    return nowMs < lease.renewedAtMs + (lease.expiresAtMs - lease.renewedAtMs) / 2;
  }

  /** The hold's write failed: its room goes back. */
  unreserve(holdId: string): void {
    const entry = this.holds.get(holdId);
    if (!entry) return;
    this.holds.delete(holdId);
    entry.lease.heldNano -= entry.amountNano;
  }

  /** The receipt of a hold placed in a lease committed, charging `costNano` to it. */
  settled(holdId: string, costNano: number): void {
    const entry = this.holds.get(holdId);
    if (!entry) return;
    this.holds.delete(holdId);
    entry.lease.heldNano -= entry.amountNano;
    entry.lease.chargedNano += costNano;
  }

  /**
   * Holds whose requests are no longer in flight (`live`: the hold keeper's snapshot) at two
   * sweeps in a row: their settlement failed for good. One sweep is not enough, as a request may
   * have placed its hold after the snapshot was taken. The caller detaches them from the lease
   * in the database (they are then counted as ordinary holds, expire and are recovered), then
   * calls `forget`.
   */
  abandoned(live: ReadonlySet<string>): string[] {
    const abandoned: string[] = [];
    for (const [id, entry] of this.holds) {
      entry.missed = live.has(id) ? 0 : entry.missed + 1;
      if (entry.missed >= 2) abandoned.push(id);
    }
    return abandoned;
  }

  /** Holds detached from their lease: their room goes back to it. */
  forget(ids: readonly string[]): void {
    for (const id of ids) this.unreserve(id);
  }

  /** Every sweep: fold, extend, resize each lease; an idle one is handed back. */
  async renewAll(expiresAt: string): Promise<void> {
    for (const lease of [...this.leases.values()]) {
      const idle = !lease.usedSinceRenewal && lease.heldNano === 0;
      if (idle) lease.targetNano = 0;
      await this.renew(lease, expiresAt);
      if (idle && lease.id === null) this.leases.delete(leaseKey(lease));
    }
  }

  /** On close: hand every lease back (what holds still use stays reserved until they settle or are recovered). */
  async handBack(expiresAt: string): Promise<void> {
    for (const lease of this.leases.values()) lease.targetNano = 0;
    await this.renewAll(expiresAt);
  }

  /** One renewal of `lease` at a time; callers arriving meanwhile wait for it. */
  private renew(lease: Lease, expiresAt: string): Promise<void> {
    lease.renewing ??= this.exclusive(async () => {
      const sentAtMs = Date.now();
      const renewed = await this.renewLease({
        leaseId: lease.id,
        newId: `lease_${randomBytes(9).toString('base64url')}`,
        accountId: lease.accountId,
        owner: lease.owner,
        month: lease.month,
        targetNano: lease.targetNano,
        keepNano: lease.heldNano,
        expiresAt,
        keyId: lease.keyId,
        day: lease.day,
        dailyLimitNano: lease.dailyLimitNano,
      });
      if (lease.id !== null && renewed.leaseId === null && lease.heldNano > 0) {
        // Gone (recovered while this process stalled): its holds became ordinary holds and their
        // receipts charge the account. A fresh lease starts from nothing.
        const fresh = emptyLease(lease);
        fresh.targetNano = lease.targetNano;
        this.leases.set(leaseKey(lease), fresh);
      }
      // A lease kept keeps the latest expiry it was given (gateway_renew_lease); a new one has this one.
      lease.expiresAtMs =
        lease.id !== null && lease.id === renewed.leaseId ? Math.max(lease.expiresAtMs, Date.parse(expiresAt)) : Date.parse(expiresAt);
      lease.renewedAtMs = sentAtMs;
      lease.id = renewed.leaseId;
      lease.grantedNano = renewed.grantedNano;
      lease.chargedNano = renewed.chargedNano;
      lease.usedSinceRenewal = false;
    }).finally(() => {
      lease.renewing = null;
    });
    return lease.renewing;
  }
}

function leaseKey(scope: LeaseScope): string {
  return [scope.accountId, scope.month, scope.keyId ?? '', scope.day ?? '', scope.dailyLimitNano ?? ''].join('\u0000');
}

function emptyLease(of: LeaseScope): Lease {
  return {
    accountId: of.accountId,
    month: of.month,
    owner: of.owner,
    keyId: of.keyId,
    day: of.day,
    dailyLimitNano: of.dailyLimitNano,
    id: null,
    grantedNano: 0,
    chargedNano: 0,
    heldNano: 0,
    targetNano: 0,
    usedSinceRenewal: false,
    renewing: null,
    renewedAtMs: 0,
    expiresAtMs: 0,
  };
}

function room(lease: Lease): number {
  return lease.id === null ? 0 : lease.grantedNano - lease.chargedNano - lease.heldNano;
}
