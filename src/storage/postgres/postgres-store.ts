import { formatUsd } from '../../lib/money.ts';
import { keyCreatedDetail } from '../console-storage.ts';
import { assertHoldOfRun } from '../fix-run-hold.ts';
import type { AuditEntry, HoldRefusal } from '../records.ts';
import type { ReceiptPage, Store } from '../store.ts';
import { applyMigrations } from './migrations.ts';
import { createPostgresConsole } from './postgres-console.ts';
import { PostgresDatabase } from './postgres-database.ts';
import { createPostgresLedger } from './postgres-ledger.ts';
import {
  apiKeyFromRow,
  type ApiKeyRow,
  fixQuoteFromRow,
  type FixQuoteRow,
  fixRunEventFromRow,
  type FixRunEventRow,
  fixRunFromRow,
  type FixRunRow,
  receiptFromRow,
  type ReceiptRow,
} from '../row-mapping.ts';
import { statements } from './statements.ts';

/**
 * A Store on PostgreSQL, for several gateway processes sharing one ledger. `url` is a
 * postgres:// or postgresql:// URL; `?pool_max=` sizes the connection pool (default 10).
 *
 * Round trips to the database per model request, each one statement in its own transaction:
 * - keysChangeToken: at most 1 a second (one-row primary-key SELECT; with Redis, the backstop)
 * - findKeyByHash: 1, only when the key is not in the authenticator's cache
 * - placeHold: in the process's balance lease with a hold journal (Redis), none (one Redis
 *   write instead, postgres-hold-journal.ts); in the lease without one, its share of a batch
 *   (gateway_apply_batch), an insert; else checked under the account row, once per batch
 * - recordReceipt: its share of a batch: receipt, hold released, its cost added to the lease's
 *   charges (or, outside a lease, to the account's balance and month), the key's day; committed
 *   without waiting for the WAL flush (postgres-durability.ts)
 * - after the answer, per 50 ms of settlements: a flush barrier (one empty synchronous commit)
 * - per few hundred requests: a lease renewal (gateway_renew_lease: fold, resize)
 *
 * Per fix run: startFixRun 1 (gateway_start_fix_run; 2 when the quote already ran: the run is
 * read back), appendFixRunEvent 1 per event, finishFixRun 4 (BEGIN, end the run, receipt, COMMIT),
 * requestFixRunCancel 1.
 */
export function createPostgresStore(url: string): Store {
  const database = new PostgresDatabase(url);
  const ledger = createPostgresLedger(database);
  let closing: Promise<void> | undefined;

  interface StartRow {
    started: boolean;
    reason: HoldRefusal | null;
    remaining_nano: number | null;
    existing_run_id: string | null;
  }

  return {
    ...createPostgresConsole(database),

    async migrate() {
      const client = await database.pool.connect();
      try {
        await applyMigrations(client);
      } finally {
        client.release();
      }
    },

    async insertKey(key, actor) {
      await database.transaction(async (client) => {
        // Keys arrive before anything else for an account, so they bring its row into being.
        await database.rows(statements.ensureAccount(key.accountId, key.createdAt), client);
        await database.rows(statements.insertKey(key), client);
        if (actor !== undefined)
          await database.rows(statements.insertAudit(key.accountId, key.createdAt, actor, 'key.created', keyCreatedDetail(key)), client);
        await database.rows(statements.bumpKeyChanges(), client);
      });
    },
    async findKeyByHash(hash) {
      const row = await database.first<ApiKeyRow>(statements.keyByHash(hash));
      return row ? apiKeyFromRow(row) : null;
    },
    async listKeys(accountId) {
      return (await database.rows<ApiKeyRow>(statements.keysOfAccount(accountId))).map(apiKeyFromRow);
    },
    async revokeKey(accountId, idOrPrefix, at, actor) {
      return database.transaction(async (client) => {
        const matches = await database.rows<ApiKeyRow>(statements.activeKeysMatching(accountId, idOrPrefix), client);
        if (matches.length > 1) throw new Error(`"${idOrPrefix}" is ambiguous: it matches more than one active key; use the key id`);
        const match = matches[0];
        if (!match) return null;
        const row = (await database.first<ApiKeyRow>(statements.revokeKey(match.id, at), client))!;
        await database.rows(statements.insertAudit(accountId, at, actor, 'key.revoked', { keyId: row.id, prefix: row.prefix }), client);
        // Committed together with the revocation: no process can see one without the other.
        await database.rows(statements.bumpKeyChanges(), client);
        return apiKeyFromRow(row);
      });
    },
    async keysChangeToken() {
      const row = await database.first<{ version: number }>(statements.keyChangesVersion());
      if (!row) throw new Error('the key_changes row is missing; run migrate()');
      return row.version;
    },

    placeHold: (hold, dailyLimitNano) => ledger.placeHold(hold, dailyLimitNano),
    async recordReceipt(receipt) {
      await ledger.recordReceipt(receipt);
    },
    extendHolds: (owner, ids, expiresAt) => ledger.extendHolds(owner, ids, expiresAt),
    releaseOrphanedHolds: (now, isOwnerDead) => ledger.releaseOrphanedHolds(now, isOwnerDead),
    useHoldJournal: (journal) => ledger.useHoldJournal(journal),
    listHolds: (accountId) => ledger.listHolds(accountId),
    accountSummary: (accountId, month) => ledger.accountSummary(accountId, month),
    keyDaySpend: (keyId, day) => ledger.keyDaySpend(keyId, day),
    async setMonthlyBudget(accountId, nano, actor) {
      if (nano !== null && (!Number.isSafeInteger(nano) || nano < 0))
        throw new RangeError(`a budget must be a whole number of nano-USD, got ${nano}`);
      await ledger.setMonthlyBudget(accountId, nano, actor);
    },

    async getReceipt(accountId, id) {
      const row = await database.first<ReceiptRow>(statements.receipt(accountId, id));
      return row ? receiptFromRow(row) : null;
    },
    async listReceipts(accountId, { limit, before }): Promise<ReceiptPage> {
      if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
      // One row more than asked tells whether another page exists.
      const statement =
        before === undefined ? statements.newestReceipts(accountId, limit + 1) : statements.receiptsBefore(accountId, before, limit + 1);
      const rows = await database.rows<ReceiptRow>(statement);
      return { data: rows.slice(0, limit).map(receiptFromRow), hasMore: rows.length > limit };
    },

    async getBalance(accountId) {
      return (await database.first<{ balance_nano: number }>(statements.balance(accountId)))?.balance_nano ?? 0;
    },
    async addFunds(accountId, nano, actor, note) {
      if (!Number.isSafeInteger(nano) || nano <= 0) throw new RangeError(`funds must be a positive whole number of nano-USD, got ${nano}`);
      const at = new Date().toISOString();
      return database.transaction(async (client) => {
        // The account row first, as in placing a hold: one lock order.
        const { balance_text, leased_nano } = (await database.first<{ balance_text: string; leased_nano: number }>(
          statements.creditAccount(accountId, nano, at),
          client,
        ))!;
        // Checked inside the transaction (as text: the sum may be past what a number holds), so two
        // adds at once cannot both pass it. Throwing rolls back.
        if (BigInt(balance_text) > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError('funds: the balance may not pass 2^53 - 1 nano-USD');
        // Less the charges of balance leases not yet folded into the row (postgres-balance-leases.ts).
        const balance = Number(balance_text) - leased_nano;
        await database.rows(statements.insertFunds(accountId, at, nano, note ?? null), client);
        await database.rows(statements.insertAudit(accountId, at, actor, 'funds.added', { amount: formatUsd(nano), note: note ?? null }), client);
        return balance;
      });
    },
    async ledgerTotals(accountId) {
      return (await database.first<{ funds: number; charges: number }>(statements.ledgerTotals(accountId)))!;
    },

    async insertFixQuote(quote) {
      await database.rows(statements.insertFixQuote(quote));
    },
    async getFixQuote(accountId, id) {
      const row = await database.first<FixQuoteRow>(statements.fixQuote(accountId, id));
      return row ? fixQuoteFromRow(row) : null;
    },
    async startFixRun(run, hold, dailyLimitNano) {
      assertHoldOfRun(run, hold);
      const row = await database.first<StartRow>(statements.startFixRun(run, hold, dailyLimitNano));
      if (!row) throw new Error('gateway_start_fix_run returned no decision');
      if (row.started) return { started: true };
      if (row.existing_run_id === null)
        return { started: false, refused: { placed: false, reason: row.reason!, remainingNano: row.remaining_nano! } };
      // Runs are never deleted once committed: the row read back is there.
      const existing = (await database.first<FixRunRow>(statements.fixRunById(row.existing_run_id)))!;
      return { started: false, existing: fixRunFromRow(existing) };
    },
    async getFixRun(accountId, id) {
      const row = await database.first<FixRunRow>(statements.fixRun(accountId, id));
      return row ? fixRunFromRow(row) : null;
    },
    async getFixRunByQuote(accountId, quoteId) {
      const row = await database.first<FixRunRow>(statements.fixRunOfQuote(accountId, quoteId));
      return row ? fixRunFromRow(row) : null;
    },
    async appendFixRunEvent(event) {
      await database.rows(statements.insertFixRunEvent(event));
    },
    async listFixRunEvents(runId, afterSequence) {
      return (await database.rows<FixRunEventRow>(statements.fixRunEventsAfter(runId, afterSequence))).map(fixRunEventFromRow);
    },
    finishFixRun(runId, status, result, finishedAt, receipt) {
      return database.transaction(async (client) => {
        const ended = await database.first<{ id: string }>(statements.finishFixRun(runId, status, result, finishedAt), client);
        if (!ended) return false;
        await ledger.recordReceipt(receipt, client);
        return true;
      });
    },
    async requestFixRunCancel(accountId, id) {
      const row = await database.first<FixRunRow>(statements.requestFixRunCancel(accountId, id));
      return row ? fixRunFromRow(row) : null;
    },

    async appendAudit(entry: Omit<AuditEntry, 'id'>) {
      await database.rows(statements.insertAudit(entry.accountId, entry.at, entry.actor, entry.action, entry.detail));
    },

    close() {
      // Leases go back first, so other processes may use their room at once. pg refuses a second
      // end(); closing twice is harmless here, as with SQLite.
      return (closing ??= ledger
        .handBackLeases()
        .catch(() => undefined)
        .then(() => database.end()));
    },
  };
}
