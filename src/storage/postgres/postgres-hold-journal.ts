import { setImmediate as nextTurn } from 'node:timers/promises';
import type { HoldRecord } from '../records.ts';
import { holdToRow } from '../row-mapping.ts';
import type { HoldJournal } from '../store.ts';
import type { BalanceLeases } from './postgres-balance-leases.ts';
import type { PostgresDatabase } from './postgres-database.ts';
import { statements } from './statements.ts';

type Row = Record<string, unknown> & { id: string; lease_id: string | null; account_id: string; owner: string };

/**
 * Holds placed in a balance lease, recorded in a journal (Redis) instead of the database before
 * the provider is called: one Redis write (about a tenth of a millisecond on a quiet host) where
 * a PostgreSQL commit took most of one, and two rows fewer per request (the hold's insert and
 * delete). Only the room is decided by the lease (in memory, against a reservation the database
 * holds durably); the journal entry exists so a survivor can find the request if this process dies.
 *
 * Invariants:
 * - A hold is journaled only inside a fresh lease (postgres-balance-leases.ts `fresh`), checked
 *   again once the entry is stored; otherwise it is written to the database as before, and that
 *   write decides. Its room is reserved by the lease row, committed before: no overspend however
 *   the journal fails.
 * - A survivor releasing a lease (expired, or its owner dead) first reads the owner's entries,
 *   then hands those of that lease to gateway_release_lease, which adopts them as ordinary holds
 *   under the lease's row lock before deleting it: their room is never free in between. They are
 *   then recovered as any hold, their receipts charged the estimated cost. If the journal cannot
 *   be read, the lease is not released (its reservation stays); the rest of the sweep goes on,
 *   then fails, and the next one tries again. listHolds and the summaries then leave the
 *   journaled holds out rather than fail.
 * - Entries whose lease is gone (handed back or shrunk away while they were in flight) are adopted
 *   as ordinary holds by the next sweep of any process.
 * - A receipt and its entry: the entry is removed after the receipt commits; an entry whose
 *   receipt exists is never adopted (gateway_adopt_holds), so a removal lost costs nothing.
 * - The owner rewrites the entries of its requests in flight every sweep (with their new
 *   expiry), so a journal that lost them (Redis restarted) has them again within one sweep.
 *
 * What it survives, beside a PostgreSQL hold row: a gateway process killed (its entries are in
 * Redis, the survivor recovers them); Redis restarting while gateways run (entries lost, owners
 * settle as usual and rewrite the live ones at their next sweep); Redis unreachable (holds take the
 * database path, recovery waits). What it does not: Redis losing its data (restart without
 * persistence, failover to a replica behind) and a gateway process dying within the same sweep
 * interval. Those requests then have no receipt and are not charged, where a hold row would have
 * charged their estimate. Never an overspend: the money stays reserved in the lease until then.
 */
export class JournaledHolds {
  /** Holds of this process journaled (their room decided by the lease alone), by id: their row as adoption writes it. */
  private readonly rows = new Map<string, Row>();
  /** Holds whose entry may have been stored but which the database decided (journal failed, lease no longer fresh). */
  private readonly written = new Map<string, string>();
  private scopeOf: Promise<string> | null = null;
  /** Entries to remove, by owner, sent together on the next turn of the event loop. */
  private readonly removals = new Map<string, string[]>();
  /** Entries to put, by owner, and the put that will send them on the next turn of the event loop. */
  private readonly puts = new Map<string, Map<string, string>>();
  private nextPut: Promise<void> | null = null;

  constructor(
    private readonly journal: HoldJournal,
    private readonly database: PostgresDatabase,
    private readonly leases: BalanceLeases,
  ) {}

  /** This ledger's name in the journal (ledger_identity). */
  private scope(): Promise<string> {
    this.scopeOf ??= this.database.first<{ id: string }>(statements.ledgerIdentity()).then(
      (row) => row!.id,
      (error: unknown) => {
        this.scopeOf = null;
        throw error;
      },
    );
    return this.scopeOf;
  }

  /** Records `hold`, placed in `leaseId`; true when the request may go on, false when the database must decide. */
  async place(hold: HoldRecord, leaseId: string): Promise<boolean> {
    if (!this.journal.available() || !this.leases.fresh(hold.id)) return false;
    const row: Row = { ...holdToRow(hold), lease_id: leaseId };
    // Removed with the receipt, whatever happens below.
    this.written.set(hold.id, hold.owner);
    try {
      await this.put(hold.owner, hold.id, JSON.stringify(row));
    } catch {
      return false;
    }
    // Stalled meanwhile: the lease may be past its half-life; the database decides.
    if (!this.leases.fresh(hold.id)) return false;
    this.rows.set(hold.id, row);
    return true;
  }

  /**
   * The entries of one turn of the event loop go as one put per owner: under load, the requests a
   * batch of Redis replies lets go on place their holds in the same turn, and one HSET (with its
   * SADD) then carries them all instead of two commands each. If the put fails, each of them falls
   * back to the database.
   */
  private put(owner: string, id: string, text: string): Promise<void> {
    const entries = this.puts.get(owner) ?? this.puts.set(owner, new Map()).get(owner)!;
    entries.set(id, text);
    this.nextPut ??= nextTurn().then(async () => {
      const puts = [...this.puts];
      this.puts.clear();
      this.nextPut = null;
      const scope = await this.scope();
      await Promise.all(puts.map(([by, batch]) => this.journal.put(scope, by, batch)));
    });
    return this.nextPut;
  }

  /** The receipt of `holdId` committed: its entry, if any, goes (a removal lost costs nothing). */
  settled(holdId: string): void {
    const owner = this.written.get(holdId);
    if (owner === undefined) return;
    this.rows.delete(holdId);
    this.written.delete(holdId);
    // The removals of one turn of the event loop go as one command per owner.
    const ids = this.removals.get(owner) ?? this.removals.set(owner, []).get(owner)!;
    ids.push(holdId);
    if (this.removals.size === 1 && ids.length === 1) setImmediate(() => this.flushRemovals());
  }

  private flushRemovals(): void {
    const removals = [...this.removals];
    this.removals.clear();
    void this.scope()
      .then((scope) => Promise.all(removals.map(([owner, ids]) => this.journal.remove(scope, owner, ids))))
      .catch(() => undefined);
  }

  /** Whether `holdId` has an entry (its hold has no row unless adopted). */
  has(holdId: string): boolean {
    return this.rows.has(holdId);
  }

  /** Every sweep: the entries of requests in flight are written again with their new expiry. */
  async refresh(owner: string, live: readonly string[], expiresAt: string): Promise<void> {
    const entries = new Map<string, string>();
    for (const id of live) {
      const row = this.rows.get(id);
      if (!row || row.owner !== owner) continue;
      row.expires_at = expiresAt;
      entries.set(id, JSON.stringify(row));
    }
    if (entries.size > 0 && this.journal.available()) await this.journal.put(await this.scope(), owner, entries);
  }

  /** Holds whose settlement failed for good: adopted as ordinary holds, their entries removed; returns those it took. */
  async adoptAbandoned(ids: readonly string[]): Promise<string[]> {
    const rows = ids.map((id) => this.rows.get(id)).filter((row): row is Row => row !== undefined);
    if (rows.length === 0) return [];
    await this.database.rows(statements.adoptHolds(rows.map((row) => ({ ...row, lease_id: null }))));
    for (const row of rows) this.settled(row.id);
    return rows.map((row) => row.id);
  }

  /** The entries `owner` journaled in `leaseId`, for gateway_release_lease to adopt. Throws when the journal cannot answer. */
  async entriesOfLease(owner: string, leaseId: string): Promise<Row[]> {
    return (await this.entriesOf(await this.scope(), owner)).filter((row) => row.lease_id === leaseId);
  }

  /** After a release: the entries adopted go from the journal. */
  async forget(owner: string, ids: readonly string[]): Promise<void> {
    if (ids.length > 0) await this.journal.remove(await this.scope(), owner, ids);
  }

  /** Owners with entries, for recovery to judge. */
  async owners(): Promise<string[]> {
    return this.journal.owners(await this.scope());
  }

  /** Entries whose lease is gone become ordinary holds; owners left without entries are dropped. */
  async adoptOrphans(): Promise<void> {
    const scope = await this.scope();
    for (const owner of await this.journal.owners(scope)) {
      const rows = await this.entriesOf(scope, owner);
      if (rows.length === 0) {
        await this.journal.dropOwner(scope, owner);
        continue;
      }
      const leaseIds = [...new Set(rows.map((row) => row.lease_id).filter((id): id is string => id !== null))];
      const there = new Set((await this.database.rows<{ id: string }>(statements.leasesThere(leaseIds))).map((row) => row.id));
      const orphans = rows.filter((row) => row.lease_id === null || !there.has(row.lease_id));
      if (orphans.length === 0) continue;
      await this.database.rows(statements.adoptHolds(orphans.map((row) => ({ ...row, lease_id: null }))));
      await this.journal.remove(
        scope,
        owner,
        orphans.map((row) => row.id),
      );
    }
  }

  /** Every entry of every owner that `matches`, for listHolds, accountSummary and keyDaySpend. */
  async holdsWhere(matches: (row: Row) => boolean): Promise<Row[]> {
    const scope = await this.scope();
    const rows: Row[] = [];
    for (const owner of await this.journal.owners(scope)) rows.push(...(await this.entriesOf(scope, owner)).filter(matches));
    return rows;
  }

  private async entriesOf(scope: string, owner: string): Promise<Row[]> {
    return [...(await this.journal.entries(scope, owner)).values()].map((text) => JSON.parse(text) as Row);
  }
}
