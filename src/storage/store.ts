import type { ConsoleStore } from './console-store.ts';
import type { FixRunStore } from './fix-run-store.ts';
import type { KeyStore } from './key-store.ts';
import type { LedgerStore } from './ledger-store.ts';
import type { ReceiptStore } from './receipt-store.ts';

export type { HoldJournal } from './ledger-store.ts';
export type { ReceiptPage } from './receipt-store.ts';

/** The one account of an embedded deployment (decisions: one deployment serves one workspace). */
export const DEFAULT_ACCOUNT_ID = 'default';

/**
 * The storage port: every backend (SQLite, PostgreSQL) implements all of it and passes the
 * contract suites in src/testing/. Callers take the part they need (KeyStore, LedgerStore,
 * ReceiptStore, FixRunStore, ConsoleStore). All methods are async so either backend fits.
 */
export interface Store extends KeyStore, LedgerStore, ReceiptStore, FixRunStore, ConsoleStore {
  migrate(): Promise<void>;
  close(): Promise<void>;
}
