import type pg from 'pg';
import { formatInstantNanos } from '../../lib/instant-nanos.ts';
import { orphanReceipt, recoveredFixRunResult } from '../orphan-receipt.ts';
import type { AccountSummary, HoldDecision, HoldRecord, HoldRefusal, ReceiptRecord } from '../records.ts';
import type { HoldJournal } from '../store.ts';
import { budgetChange } from '../rows/ledger-rows.ts';
import type { PostgresDatabase } from './postgres-database.ts';
import { BalanceLeases } from './postgres-balance-leases.ts';
import { FlushBarrier } from './postgres-durability.ts';
import { type BatchedWrite, PostgresGroupCommit } from './postgres-group-commit.ts';
import { JournaledHolds } from './postgres-hold-journal.ts';
import { holdFromRow, holdToRow, type HoldRow } from '../row-mapping.ts';
import { settlementJson, statements } from './statements.ts';
import { KeyTouches } from '../key-touches.ts';

interface DecisionRow {
  placed: boolean;
  reason: HoldRefusal | null;
  remaining_nano: number | null;
}

interface SummaryRow {
  balance_nano: number | null;
  monthly_budget_nano: number | null;
  held_nano: number;
  hold_count: number;
  month_held_nano: number;
  month_charged_nano: number;
}

/**
 * Holds, charges, daily and monthly spend on PostgreSQL, exact across processes. A process sends
 * its holds and settlements together (postgres-group-commit.ts): one round trip and one
 * transaction per batch. Holds are placed in this process's balance lease (a key lease for a key
 * with a daily limit; postgres-balance-leases.ts) and settle against it, without the account row;
 * when no lease has room (near the end of a balance, budget or limit) they lock the account row
 * once per batch (schema/functions/gateway-apply-batch.sql).
 */
export function createPostgresLedger(database: PostgresDatabase) {
  const groupCommit = new PostgresGroupCommit(async (ops, flushLater) => {
    type Results = { results: Array<Record<string, unknown>> };
    const statement = statements.applyBatch(ops);
    const row = flushLater ? await database.settle<Results>(statement) : await database.first<Results>(statement);
    return row!.results;
  });
  // Settlements commit before their flush; their journal entries go once it is confirmed (postgres-durability.ts).
  const barrier = new FlushBarrier(() => database.flushed());
  /** Settlements whose flush could not be confirmed and that could not be settled again yet. */
  const unflushed = new Map<string, ReceiptRecord>();
  const confirming = new Set<Promise<void>>();
  const leases = new BalanceLeases(
    async (request) => {
      const row = (await database.first<{ lease_id: string | null; granted_nano: number; charged_nano: number }>(statements.renewLease(request)))!;
      return { leaseId: row.lease_id, grantedNano: row.granted_nano, chargedNano: row.charged_nano };
    },
    (work) => groupCommit.exclusive(work),
  );
  /** With a journal (useHoldJournal): holds placed in the lease are recorded there, not in the database. */
  let journaled: JournaledHolds | null = null;
  // One batch, alone: what a write in a lease runs when its batch failed.
  const applyAlone = async (json: Record<string, unknown>) => {
    const row = await database.first<{ results: Array<Record<string, unknown>> }>(statements.applyBatch([json]));
    return row!.results[0]!;
  };

  const touches = new KeyTouches();

  /**
   * On a transaction's client when given, else in this process's next batch. Returns the
   * receipt's createdAt as stored (receipt-order.ts). Settling the same receipt again writes
   * and charges nothing and returns the createdAt stored the first time.
   */
  async function recordReceipt(receipt: ReceiptRecord, client?: pg.PoolClient): Promise<string> {
    const touch = touches.claim(receipt.keyId, receipt.createdAt);
    const leaseId = client ? null : leases.leaseOf(receipt.id);
    const json = settlementJson(receipt, touch, leaseId);
    // On a transaction's client it commits with that transaction; else without waiting for the flush.
    const alone = async () =>
      (client
        ? await database.first<{ created_ns: string }>(statements.recordReceipt(json), client)
        : await database.settle<{ created_ns: string }>(statements.recordReceipt(json)))!.created_ns;
    const createdNs = client ? await alone() : await groupCommit.run({ json, fromBatch: createdNsOf, alone, flushLater: true });
    if (leaseId !== null) leases.settled(receipt.id, receipt.costNano);
    if (!client) confirm(receipt);
    return formatInstantNanos(BigInt(createdNs));
  }

  /** Once the settlement of `receipt` is on disk its journal entry goes; if that cannot be confirmed, it is settled again. */
  function confirm(receipt: ReceiptRecord): void {
    const confirmed = barrier
      .flushed()
      .then(
        () => flushedOut(receipt.id),
        () => settleAgain(receipt),
      )
      .finally(() => confirming.delete(confirmed));
    confirming.add(confirmed);
  }

  function flushedOut(receiptId: string): void {
    unflushed.delete(receiptId);
    journaled?.settled(receiptId);
  }

  /**
   * Synchronously and idempotently: a receipt whose commit survived is found and nothing more is
   * written; one lost with the server is written and charged now (to the account, as any charge
   * outside a lease). Failing, it stays in `unflushed` and is tried again at the next sweep.
   */
  async function settleAgain(receipt: ReceiptRecord): Promise<void> {
    try {
      await database.first(statements.recordReceipt(settlementJson(receipt, false, null)));
      flushedOut(receipt.id);
    } catch {
      // Tried again at the next sweep (extendHolds); its journal entry stays, for a survivor should this process die.
      unflushed.set(receipt.id, receipt);
    }
  }

  /**
   * In this process's lease (a key lease when the key has a daily limit) when it has room or gets
   * it: recorded in the hold journal when there is one and the lease is fresh, else in this
   * process's next batch; otherwise checked under the account row in the next batch. Placing a hold whose
   * id is already there answers placed.
   */
  async function placeHold(hold: HoldRecord, dailyLimitNano: number | null): Promise<HoldDecision> {
    const leaseId = await leases.reserve(hold, dailyLimitNano);
    if (leaseId !== null) {
      if (journaled && (await journaled.place(hold, leaseId))) return { placed: true };
      // The limit goes along: a hold whose lease is gone is checked as any other, limit included.
      const json = { op: 'lease_hold', ...holdToRow(hold), lease_id: leaseId, daily_limit_nano: dailyLimitNano };
      let decision: HoldDecision;
      try {
        decision = await groupCommit.run({ json, fromBatch: decisionOf, alone: async () => decisionOf(await applyAlone(json)) });
      } catch (error) {
        leases.unreserve(hold.id);
        throw error;
      }
      // Its lease was released meanwhile (this process stalled): checked as any hold, and refused.
      if (!decision.placed) leases.unreserve(hold.id);
      return decision;
    }
    return groupCommit.run(
      holdWrite(hold, dailyLimitNano, async () => decisionFrom(await database.first<DecisionRow>(statements.placeHold(hold, dailyLimitNano)))),
    );
  }

  /**
   * Owners are judged in JS (is that process alive?), then each orphan is taken in its own
   * transaction by a DELETE that re-checks why it is an orphan: of two processes recovering at
   * once only one deletes the row and writes its receipt, and a hold its live owner renewed
   * meanwhile stays. A fix run holding it ends failed in the same transaction; its row is locked
   * before the hold, in the order finishing a run takes them, so the two never deadlock.
   */
  async function releaseOrphanedHolds(now: string, isOwnerDead: (owner: string) => boolean): Promise<ReceiptRecord[]> {
    const owners = (await database.rows<{ owner: string }>(statements.holdOwners())).map((row) => row.owner);
    // A journal that cannot answer holds back only what needs it (a lease is not released without
    // its entries: its reservation stays); the rest is recovered, and the error thrown at the end.
    let journalError: unknown = null;
    const failed = (error: unknown) => void (journalError ??= error);
    if (journaled) owners.push(...(await journaled.owners().catch((error: unknown) => (failed(error), []))));
    const deadOwners = [...new Set(owners)].filter((owner) => isOwnerDead(owner));
    // Leases first: the holds still in a dead one (rows, and entries of the journal read after the
    // lease was found due) become ordinary holds, recovered below.
    for (const { id, owner } of await database.rows<{ id: string; owner: string }>(statements.leasesToRelease(now, deadOwners))) {
      const entries = journaled ? await journaled.entriesOfLease(owner, id).catch((error: unknown) => (failed(error), null)) : [];
      if (entries === null) continue;
      const [row] = await database.rows<{ released: boolean }>(statements.releaseLease(id, now, deadOwners, entries));
      // A removal lost costs nothing: an entry whose receipt or row is there is never adopted again.
      if (row?.released && entries.length > 0)
        await journaled!
          .forget(
            owner,
            entries.map((entry) => entry.id),
          )
          .catch(() => undefined);
    }
    if (journaled && journalError === null) await journaled.adoptOrphans().catch(failed);
    const candidates = await database.rows<{ id: string }>(statements.holdsToRelease(now, deadOwners));
    const released: ReceiptRecord[] = [];
    for (const { id } of candidates) {
      const receipt = await database.transaction(async (client) => {
        await database.rows(statements.lockFixRunOfReceipt(id), client);
        const row = await database.first<HoldRow>(statements.takeOrphanedHold(id, now, deadOwners), client);
        if (!row) return null;
        const closed = orphanReceipt(holdFromRow(row), now);
        const createdAt = await recordReceipt(closed, client);
        await database.rows(statements.failRecoveredFixRun(id, recoveredFixRunResult(closed.costNano), now), client);
        return { ...closed, createdAt };
      });
      if (receipt) released.push(receipt);
    }
    if (journalError !== null) throw journalError;
    return released;
  }

  async function setMonthlyBudget(accountId: string, nano: number | null, actor: string): Promise<void> {
    const at = new Date().toISOString();
    await database.transaction(async (client) => {
      const [row] = await database.rows<{ before: string | number | null }>(statements.setBudget(accountId, nano), client);
      const before = row?.before === null || row?.before === undefined ? null : Number(row.before);
      await database.rows(statements.insertAudit(accountId, at, actor, 'budget.set', budgetChange(nano, before)), client);
    });
  }

  /**
   * Journal entries that `matches` and have no row (one adopted meanwhile is counted once, as its
   * row) and no receipt (settled, its entry removed once the commit is flushed).
   */
  async function journaledWithoutRow(matches: (entry: Record<string, unknown>) => boolean) {
    // A journal that cannot answer leaves its holds out of these figures rather than fail them.
    const entries = journaled ? await journaled.holdsWhere(matches).catch(() => []) : [];
    if (entries.length === 0) return entries;
    const rows = new Set((await database.rows<{ id: string }>(statements.holdsThere(entries.map((entry) => entry.id)))).map((held) => held.id));
    return entries.filter((entry) => !rows.has(entry.id));
  }

  async function accountSummary(accountId: string, month: string): Promise<AccountSummary> {
    const row = (await database.first<SummaryRow>(statements.accountSummary(accountId, month)))!;
    const entries = await journaledWithoutRow((entry) => entry.account_id === accountId);
    const sum = (list: typeof entries) => list.reduce((total, entry) => total + Number(entry.amount_nano), 0);
    return {
      balanceNano: row.balance_nano ?? 0,
      heldNano: row.held_nano + sum(entries),
      holdCount: row.hold_count + entries.length,
      month,
      monthChargedNano: row.month_charged_nano,
      monthHeldNano: row.month_held_nano + sum(entries.filter((entry) => entry.month === month)),
      monthlyBudgetNano: row.monthly_budget_nano,
    };
  }

  return {
    groupCommit,
    placeHold,
    recordReceipt,
    releaseOrphanedHolds,
    setMonthlyBudget,
    accountSummary,
    async extendHolds(owner: string, ids: readonly string[], expiresAt: string): Promise<void> {
      // Settlements whose flush could not be confirmed and not yet settled again (the server was away).
      for (const receipt of [...unflushed.values()]) await settleAgain(receipt);
      if (ids.length > 0) await database.rows(statements.extendHolds(owner, ids, expiresAt));
      // Rewritten even when Redis kept them: cheap, and it brings back what a restart lost.
      await journaled?.refresh(owner, ids, expiresAt).catch(() => undefined);
      const abandoned = leases.abandoned(new Set(ids));
      if (abandoned.length > 0) {
        const adopted = new Set(journaled ? await journaled.adoptAbandoned(abandoned) : []);
        const rows = abandoned.filter((id) => !adopted.has(id));
        if (rows.length > 0) await database.rows(statements.detachHolds(rows));
        // A row's entry, if its journal write was tried, goes too.
        for (const id of rows) journaled?.settled(id);
        leases.forget(abandoned);
      }
      await leases.renewAll(expiresAt);
    },
    useHoldJournal(journal: HoldJournal): void {
      journaled = new JournaledHolds(journal, database, leases);
    },
    /** Hands this process's leases back (store close, after the requests drained and their flushes were confirmed). */
    async handBackLeases(): Promise<void> {
      await Promise.allSettled([...confirming]);
      await leases.handBack(new Date(Date.now() + 60_000).toISOString());
    },
    async listHolds(accountId: string): Promise<HoldRecord[]> {
      const rows = await database.rows<HoldRow>(statements.holdsOfAccount(accountId));
      if (journaled) {
        for (const entry of await journaledWithoutRow((row) => row.account_id === accountId)) rows.push(entry as unknown as HoldRow);
        rows.sort((a, b) => Date.parse(String(a.created_at)) - Date.parse(String(b.created_at)) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      }
      return rows.map(holdFromRow);
    },
    async keyDaySpend(keyId: string, day: string): Promise<{ chargedNano: number; heldNano: number }> {
      const row = (await database.first<{ charged_nano: number; held_nano: number }>(statements.keyDaySpend(keyId, day)))!;
      const entries = await journaledWithoutRow((entry) => entry.key_id === keyId && entry.day === day);
      return { chargedNano: row.charged_nano, heldNano: row.held_nano + entries.reduce((total, entry) => total + Number(entry.amount_nano), 0) };
    },
  };
}

function decisionFrom(row: DecisionRow | undefined): HoldDecision {
  if (!row) throw new Error('gateway_place_hold returned no decision');
  if (row.placed) return { placed: true };
  return { placed: false, reason: row.reason!, remainingNano: row.remaining_nano! };
}

function holdWrite(hold: HoldRecord, dailyLimitNano: number | null, alone: () => Promise<HoldDecision>): BatchedWrite<HoldDecision> {
  return {
    json: { op: 'hold', ...holdToRow(hold), daily_limit_nano: dailyLimitNano },
    fromBatch: (result) => decisionFrom(result as unknown as DecisionRow),
    alone,
  };
}

function createdNsOf(result: Record<string, unknown>): string {
  return String(result.created_ns);
}

function decisionOf(result: Record<string, unknown>): HoldDecision {
  return decisionFrom(result as unknown as DecisionRow);
}
