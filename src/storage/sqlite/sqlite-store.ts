import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { formatInstantNanos } from '../../lib/instant-nanos.ts';
import { formatUsd } from '../../lib/money.ts';
import type { ApiKeyRecord, AuditEntry, ReceiptRecord } from '../records.ts';
import type { ReceiptPage, Store } from '../store.ts';
import { KeyTouches } from '../key-touches.ts';
import { startCheckpointWorker } from './checkpoint-worker.ts';
import { keyCreatedDetail } from '../console-storage.ts';
import { applyMigrations } from './migrations.ts';
import { orphanReceipt } from '../orphan-receipt.ts';
import { instantNanos, millisecondEnd } from '../receipt-order.ts';
import { createSqliteConsole } from './sqlite-console.ts';
import { createSqliteFixRuns } from './sqlite-fix-runs.ts';
import { createSqliteLedger } from './sqlite-ledger.ts';
import { WriteBatcher } from './write-batcher.ts';
import {
  apiKeyFromSqlite,
  apiKeyToSqlite,
  auditFromSqlite,
  fixQuoteFromSqlite,
  fixQuoteToSqlite,
  fixRunEventFromSqlite,
  fixRunEventToSqlite,
  fixRunFromSqlite,
  receiptFromSqlite,
  receiptToSqlite,
} from './sqlite-rows.ts';
import { prepareStatements, type Statements } from './statements.ts';

function isInMemory(path: string): boolean {
  return path === ':memory:' || path === '' || path.startsWith('file::memory:');
}

function openDatabase(path: string): Database.Database {
  if (!isInMemory(path)) mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  // busy_timeout first: switching to WAL needs a lock another starting process may hold.
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  // NORMAL in WAL mode loses no committed data on a process crash, only on power loss.
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  // Reads through the page cache of the OS instead of read() calls.
  db.pragma('mmap_size = 268435456');
  // SQLite's own page cache: 2 MB, not better-sqlite3's 16 MB. Under load it fills with pages
  // written, held in memory from the C allocator; the pages a request touches again (the
  // accounts, the holds, the right edge of the receipts and their indexes) are far fewer.
  db.pragma('cache_size = -2000');
  // The checkpoint worker keeps the WAL short; this only bounds it (about 40 MB) should it stop.
  if (!isInMemory(path)) db.pragma('wal_autocheckpoint = 10000');
  return db;
}

/** A Store on a SQLite file (created with its directory when missing) or ":memory:". */
export function createSqliteStore(path: string): Store {
  const db = openDatabase(path);
  const checkpoints = isInMemory(path) ? null : startCheckpointWorker(path);
  // Prepared once, on first use: the tables they name exist only after migrate().
  let prepared: Statements | undefined;
  const sql = (): Statements => {
    if (prepared) return prepared;
    try {
      return (prepared = prepareStatements(db));
    } catch (error) {
      throw new Error(`database ${path} has no gateway schema yet; call migrate() first (${(error as Error).message})`, { cause: error });
    }
  };

  // Writes take the lock up front (IMMEDIATE): a deferred read-then-write transaction in WAL
  // fails with SQLITE_BUSY_SNAPSHOT instead of waiting when another process wrote meanwhile.
  const ledger = createSqliteLedger(db);
  const batcher = new WriteBatcher(db);

  // Reading data_version opens a read transaction: file locks, system calls. Under load dozens of
  // requests are authenticated in one turn of the event loop; they share one read, forgotten at
  // the turn's end. A commit by another process is seen from the next turn on.
  let dataVersion: number | undefined;
  const forgetDataVersion = () => {
    dataVersion = undefined;
  };

  const touches = new KeyTouches();
  function touchKey(keyId: string, at: string): void {
    if (touches.claim(keyId, at)) sql().touchKey.run({ id: keyId, at });
  }

  /** Inserts the receipt at the first free created_ns from its createdAt up (receipt-order.ts); returns its createdAt as stored. */
  function insertReceipt(receipt: ReceiptRecord): string {
    const statements = sql();
    const row = receiptToSqlite(receipt);
    // One writer at a time: the value found is free unless its millisecond is full, then the next one is tried.
    let from = BigInt(row.created_ns);
    while (true) {
      const candidate = statements.nextReceiptInstant.get({ accountId: receipt.accountId, from, end: millisecondEnd(from) })!;
      if (statements.insertReceipt.run({ ...row, created_ns: candidate }).changes === 1) return formatInstantNanos(candidate);
      from = candidate;
    }
  }

  // Idempotent: settling a receipt already written (a retry after a lost reply) changes nothing
  // but dropping a hold of that id, and answers the createdAt stored the first time.
  const recordReceipt = db.transaction((receipt: ReceiptRecord): string => {
    const statements = sql();
    const existing = statements.receiptInstant.get(receipt.id);
    if (existing !== undefined) {
      ledger.dropHold(receipt.id);
      return formatInstantNanos(existing);
    }
    const createdAt = insertReceipt(receipt);
    // The receipt is the charge record: its cost leaves the balance in the same transaction.
    if (receipt.costNano > 0) statements.debitAccount.run(receipt.costNano, receipt.accountId);
    ledger.settleHold(receipt);
    touchKey(receipt.keyId, receipt.createdAt);
    return createdAt;
  });

  const fixRuns = createSqliteFixRuns(db, sql, ledger, recordReceipt);

  const releaseOrphans = db.transaction((now: string, isOwnerDead: (owner: string) => boolean) => {
    const released: ReceiptRecord[] = [];
    for (const hold of ledger.allHolds()) {
      if (hold.expiresAt >= now && !isOwnerDead(hold.owner)) continue;
      const receipt = orphanReceipt(hold, now);
      const createdAt = recordReceipt(receipt);
      fixRuns.endRecovered(hold.id, now, receipt.costNano);
      released.push({ ...receipt, createdAt });
    }
    return released;
  });

  const insertKey = db.transaction((key: ApiKeyRecord, actor: string | undefined) => {
    // Keys arrive before anything else for an account, so they bring its row into being.
    sql().ensureAccount.run(key.accountId, key.createdAt);
    sql().insertKey.run(apiKeyToSqlite(key));
    if (actor !== undefined) sql().insertAudit.run(key.accountId, key.createdAt, actor, 'key.created', JSON.stringify(keyCreatedDetail(key)));
  });

  const revokeKey = db.transaction((accountId: string, idOrPrefix: string, at: string, actor: string) => {
    const statements = sql();
    const matches = statements.activeKeysMatching.all({ accountId, idOrPrefix });
    if (matches.length > 1) throw new Error(`"${idOrPrefix}" is ambiguous: it matches more than one active key; use the key id`);
    const match = matches[0];
    if (!match) return null;
    const row = statements.revokeKey.get(at, match.id)!;
    const detail = { keyId: row.id, prefix: row.prefix };
    statements.insertAudit.run(accountId, at, actor, 'key.revoked', JSON.stringify(detail));
    return apiKeyFromSqlite(row);
  });

  const addFunds = db.transaction((accountId: string, nano: number, actor: string, note: string | null) => {
    const statements = sql();
    const at = new Date().toISOString();
    // The account row first: it may not exist yet, and the ledger entry refers to it.
    const balance = statements.creditAccount.get(accountId, nano, at)!;
    // Checked inside the transaction: two adds at once cannot both pass it. Throwing rolls back.
    if (!Number.isSafeInteger(balance)) throw new RangeError('funds: the balance may not pass 2^53 - 1 nano-USD');
    statements.insertFunds.run(accountId, at, nano, note);
    statements.insertAudit.run(accountId, at, actor, 'funds.added', JSON.stringify({ amount: formatUsd(nano), note }));
    return balance;
  });

  const consoleMethods = createSqliteConsole(db, (accountId, limit) => sql().newestAudit.all(accountId, limit).map(auditFromSqlite));

  return {
    ...consoleMethods,

    async migrate() {
      applyMigrations(db);
      sql();
    },

    async insertKey(key, actor) {
      insertKey.immediate(key, actor);
    },
    async findKeyByHash(hash) {
      const row = sql().keyByHash.get(hash);
      return row ? apiKeyFromSqlite(row) : null;
    },
    async listKeys(accountId) {
      return sql().keysOfAccount.all(accountId).map(apiKeyFromSqlite);
    },
    async revokeKey(accountId, idOrPrefix, at, actor) {
      return revokeKey.immediate(accountId, idOrPrefix, at, actor);
    },
    async keysChangeToken() {
      // data_version moves only when another connection commits, so our own receipts never
      // drop the key cache while a revocation by the CLI in another process always does.
      if (dataVersion === undefined) {
        dataVersion = sql().dataVersion.get()!;
        setImmediate(forgetDataVersion);
      }
      return dataVersion;
    },

    async recordReceipt(receipt) {
      await batcher.run(() => recordReceipt(receipt));
    },
    placeHold(hold, dailyLimitNano) {
      return batcher.run(() => ledger.placeHold(hold, dailyLimitNano));
    },
    async extendHolds(owner, ids, expiresAt) {
      if (ids.length > 0) ledger.extendHolds.immediate(owner, ids, expiresAt);
    },
    async releaseOrphanedHolds(now, isOwnerDead) {
      batcher.flush();
      return releaseOrphans.immediate(now, isOwnerDead);
    },
    async listHolds(accountId) {
      return ledger.listHolds(accountId);
    },
    async accountSummary(accountId, month) {
      return ledger.accountSummary(accountId, month);
    },
    async keyDaySpend(keyId, day) {
      return ledger.keyDaySpend(keyId, day);
    },
    async setMonthlyBudget(accountId, nano, actor) {
      if (nano !== null && (!Number.isSafeInteger(nano) || nano < 0))
        throw new RangeError(`a budget must be a whole number of nano-USD, got ${nano}`);
      ledger.setMonthlyBudget.immediate(accountId, nano, actor);
    },
    async getReceipt(accountId, id) {
      const row = sql().receipt.get(accountId, id);
      return row ? receiptFromSqlite(row) : null;
    },
    async listReceipts(accountId, { limit, before }): Promise<ReceiptPage> {
      if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
      const statements = sql();
      // One row more than asked tells whether another page exists.
      const rows =
        before === undefined
          ? statements.newestReceipts.all(accountId, limit + 1)
          : statements.receiptsBefore.all(accountId, instantNanos(before), limit + 1);
      return { data: rows.slice(0, limit).map(receiptFromSqlite), hasMore: rows.length > limit };
    },

    async getBalance(accountId) {
      return sql().balance.get(accountId) ?? 0;
    },
    async addFunds(accountId, nano, actor, note) {
      if (!Number.isSafeInteger(nano) || nano <= 0) throw new RangeError(`funds must be a positive whole number of nano-USD, got ${nano}`);
      return addFunds.immediate(accountId, nano, actor, note ?? null);
    },
    async ledgerTotals(accountId) {
      return sql().ledgerTotals.get({ accountId })!;
    },

    // Writes of a run go through the batcher like receipts; a single statement that fails
    // (a duplicate event) is undone alone by SQLite, the batch goes on.
    insertFixQuote(quote) {
      return batcher.run(() => void sql().insertFixQuote.run(fixQuoteToSqlite(quote)));
    },
    async getFixQuote(accountId, id) {
      const row = sql().fixQuote.get(accountId, id);
      return row ? fixQuoteFromSqlite(row) : null;
    },
    startFixRun(run, hold, dailyLimitNano) {
      return batcher.run(() => fixRuns.start(run, hold, dailyLimitNano));
    },
    async getFixRun(accountId, id) {
      const row = sql().fixRun.get(accountId, id);
      return row ? fixRunFromSqlite(row) : null;
    },
    async getFixRunByQuote(accountId, quoteId) {
      const row = sql().fixRunOfAccountQuote.get(accountId, quoteId);
      return row ? fixRunFromSqlite(row) : null;
    },
    appendFixRunEvent(event) {
      return batcher.run(() => void sql().insertFixRunEvent.run(fixRunEventToSqlite(event)));
    },
    async listFixRunEvents(runId, afterSequence) {
      return sql().fixRunEventsAfter.all(runId, afterSequence).map(fixRunEventFromSqlite);
    },
    finishFixRun(runId, status, result, finishedAt, receipt) {
      return batcher.run(() => fixRuns.finish(runId, status, result, finishedAt, receipt));
    },
    requestFixRunCancel(accountId, id) {
      return batcher.run(() => {
        const row = sql().requestFixRunCancel.get(accountId, id);
        return row ? fixRunFromSqlite(row) : null;
      });
    },

    async appendAudit(entry: Omit<AuditEntry, 'id'>) {
      sql().insertAudit.run(entry.accountId, entry.at, entry.actor, entry.action, JSON.stringify(entry.detail));
    },

    async close() {
      if (db.open) batcher.flush();
      await checkpoints?.stop();
      if (db.open) db.close();
    },
  };
}
