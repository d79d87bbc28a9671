import type { Database } from 'better-sqlite3';
import type { Migration } from '../migration.ts';
import { DEFAULT_ACCOUNT_ID } from '../store.ts';

export type { Migration } from '../migration.ts';

/**
 * Schema history, oldest first. Never edit an applied migration; append a new one.
 * Tables are STRICT so a fractional or textual amount of money is refused, not coerced.
 * Every row carries account_id so one database can later hold several workspaces.
 */
export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'accounts, keys, receipts, ledger, audit',
    sql: `
      CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        balance_nano INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL
      ) STRICT;

      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        name TEXT NOT NULL,
        prefix TEXT NOT NULL,
        hash TEXT NOT NULL UNIQUE,
        scopes TEXT NOT NULL,
        models TEXT,
        daily_limit_nano INTEGER CHECK (daily_limit_nano >= 0),
        rate_limit_per_minute INTEGER CHECK (rate_limit_per_minute > 0),
        expires_at TEXT,
        revoked_at TEXT,
        created_at TEXT NOT NULL,
        last_used_at TEXT
      ) STRICT;
      CREATE INDEX api_keys_by_account ON api_keys (account_id, created_at DESC, id DESC);

      CREATE TABLE receipts (
        id TEXT PRIMARY KEY,
        request_id TEXT NOT NULL,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        key_id TEXT NOT NULL,
        key_prefix TEXT NOT NULL,
        created_at TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('succeeded', 'failed', 'cancelled')),
        endpoint TEXT NOT NULL,
        stream INTEGER NOT NULL CHECK (stream IN (0, 1)),
        requested_model TEXT,
        answering_model TEXT,
        attempts TEXT NOT NULL,
        usage TEXT,
        usage_estimated INTEGER NOT NULL CHECK (usage_estimated IN (0, 1)),
        prices TEXT,
        hold_nano INTEGER NOT NULL CHECK (hold_nano >= 0),
        cost_nano INTEGER NOT NULL CHECK (cost_nano >= 0),
        latency_ms REAL NOT NULL,
        time_to_first_token_ms REAL,
        error_code TEXT
      ) STRICT;
      CREATE INDEX receipts_by_account_newest ON receipts (account_id, created_at DESC, id DESC);

      -- A charge references its receipt; UNIQUE stops one receipt being charged twice.
      CREATE TABLE ledger_entries (
        id INTEGER PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        at TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('funds', 'charge')),
        amount_nano INTEGER NOT NULL CHECK (amount_nano > 0),
        receipt_id TEXT UNIQUE REFERENCES receipts (id),
        note TEXT
      ) STRICT;
      CREATE INDEX ledger_entries_by_account ON ledger_entries (account_id, kind);

      -- No foreign key: an audit entry must never fail to be written.
      CREATE TABLE audit_log (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id TEXT NOT NULL,
        at TEXT NOT NULL,
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        detail TEXT NOT NULL
      ) STRICT;
      CREATE INDEX audit_log_by_account ON audit_log (account_id, id DESC);
    `,
  },
  {
    version: 2,
    name: 'holds, daily and monthly spend, monthly budget',
    sql: `
      ALTER TABLE accounts ADD COLUMN monthly_budget_nano INTEGER CHECK (monthly_budget_nano >= 0);

      -- Only requests in flight have a row here; settling deletes it. The table stays as small as
      -- the number of requests in flight, so its sums scan it whole: one b-tree, no index to
      -- update on every request.
      CREATE TABLE holds (
        id TEXT PRIMARY KEY,
        request_id TEXT NOT NULL,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        key_id TEXT NOT NULL,
        key_prefix TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        stream INTEGER NOT NULL CHECK (stream IN (0, 1)),
        requested_model TEXT,
        amount_nano INTEGER NOT NULL CHECK (amount_nano >= 0),
        day TEXT NOT NULL,
        month TEXT NOT NULL,
        created_at TEXT NOT NULL,
        owner TEXT NOT NULL,
        expires_at TEXT NOT NULL
      ) STRICT, WITHOUT ROWID;

      CREATE TABLE key_daily_spend (
        key_id TEXT NOT NULL,
        day TEXT NOT NULL,
        account_id TEXT NOT NULL,
        charged_nano INTEGER NOT NULL CHECK (charged_nano >= 0),
        PRIMARY KEY (key_id, day)
      ) STRICT, WITHOUT ROWID;

      CREATE TABLE account_monthly_spend (
        account_id TEXT NOT NULL,
        month TEXT NOT NULL,
        charged_nano INTEGER NOT NULL CHECK (charged_nano >= 0),
        PRIMARY KEY (account_id, month)
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 3,
    name: 'receipts are the charge records',
    sql: `
      -- A receipt carries its cost; a second row per charge only cost a write per request.
      DELETE FROM ledger_entries WHERE kind = 'charge';
    `,
  },
  {
    version: 4,
    name: 'fix agents: quotes, runs, run events',
    sql: `
      -- JSON columns keep the text as sent: input, result and event data are opaque to the store.
      CREATE TABLE fix_quotes (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        key_id TEXT NOT NULL,
        agent TEXT NOT NULL,
        tier TEXT NOT NULL CHECK (tier IN ('fast', 'balanced', 'best')),
        input TEXT NOT NULL,
        input_tokens INTEGER NOT NULL CHECK (input_tokens >= 0),
        estimated_cost_nano INTEGER NOT NULL CHECK (estimated_cost_nano >= 0),
        max_cost_nano INTEGER NOT NULL CHECK (max_cost_nano >= 0),
        step_budget INTEGER NOT NULL CHECK (step_budget >= 0),
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
      ) STRICT;

      -- UNIQUE (quote_id): a quote runs at most once. No foreign key to receipts: the receipt is
      -- written when the run ends; until then its hold (same id as receipt_id) is in flight.
      CREATE TABLE fix_runs (
        id TEXT PRIMARY KEY,
        quote_id TEXT NOT NULL UNIQUE REFERENCES fix_quotes (id),
        account_id TEXT NOT NULL REFERENCES accounts (id),
        key_id TEXT NOT NULL,
        receipt_id TEXT NOT NULL UNIQUE,
        agent TEXT NOT NULL,
        tier TEXT NOT NULL CHECK (tier IN ('fast', 'balanced', 'best')),
        max_cost_nano INTEGER NOT NULL CHECK (max_cost_nano >= 0),
        status TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'cost_cap_reached', 'cancelled')),
        created_at TEXT NOT NULL,
        finished_at TEXT,
        result TEXT,
        cancel_requested INTEGER NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1))
      ) STRICT;

      CREATE TABLE fix_run_events (
        run_id TEXT NOT NULL REFERENCES fix_runs (id),
        sequence INTEGER NOT NULL CHECK (sequence > 0),
        at TEXT NOT NULL,
        type TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (run_id, sequence)
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 5,
    name: 'console: members, sessions, sign-in nonces, alias rules',
    sql: `
      -- The partial unique index allows one owner per account: of two first sign-ins, the
      -- second's insert conflicts and finds itself not a member.
      CREATE TABLE members (
        account_id TEXT NOT NULL REFERENCES accounts (id),
        address TEXT NOT NULL CHECK (address = lower(address)),
        role TEXT NOT NULL CHECK (role IN ('owner', 'member')),
        added_at TEXT NOT NULL,
        added_by TEXT NOT NULL,
        PRIMARY KEY (account_id, address)
      ) STRICT, WITHOUT ROWID;
      CREATE UNIQUE INDEX members_one_owner ON members (account_id) WHERE role = 'owner';

      -- Sessions outlive a removed member's row (they are ended, not deleted): no foreign key to members.
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        account_id TEXT NOT NULL REFERENCES accounts (id),
        address TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        ended_at TEXT
      ) STRICT;
      CREATE INDEX sessions_open_by_address ON sessions (account_id, address) WHERE ended_at IS NULL;

      -- Global, as key_changes is on PostgreSQL: a nonce is issued before anyone is signed in.
      CREATE TABLE sign_in_nonces (
        nonce TEXT PRIMARY KEY,
        address TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
      ) STRICT, WITHOUT ROWID;

      CREATE TABLE alias_rules (
        account_id TEXT NOT NULL REFERENCES accounts (id),
        alias TEXT NOT NULL,
        candidates TEXT NOT NULL,
        reasoning TEXT NOT NULL CHECK (reasoning IN ('low', 'medium', 'xhigh')),
        updated_at TEXT NOT NULL,
        updated_by TEXT NOT NULL,
        PRIMARY KEY (account_id, alias)
      ) STRICT, WITHOUT ROWID;

      -- The console filters receipts by key; per-model and per-status filters scan the account's index.
      CREATE INDEX receipts_by_key_newest ON receipts (account_id, key_id, created_at DESC, id DESC);
    `,
  },
  {
    version: 6,
    name: 'receipts carry warnings: client settings a provider could not honour',
    sql: `ALTER TABLE receipts ADD COLUMN warnings TEXT NOT NULL DEFAULT '[]';`,
  },
  {
    version: 7,
    name: 'receipts ordered by a nanosecond instant unique per account',
    sql: `
      -- Receipts of one millisecond were told apart by id alone, which a client paging with
      -- before=<created_at> never sees. created_ns (receipt-order.ts) is unique per account; every
      -- insert gives it, the default only fills the rows already here.
      ALTER TABLE receipts ADD COLUMN created_ns INTEGER NOT NULL DEFAULT 0;
      -- Existing rows keep their order (created_at, then id): the k-th of a millisecond gets k - 1 ns more.
      UPDATE receipts SET created_ns = numbered.created_ns
      FROM (
        SELECT id, base + row_number() OVER (PARTITION BY account_id, base ORDER BY id) - 1 AS created_ns
        FROM (
          SELECT id, account_id,
                 (CAST(strftime('%s', created_at) AS INTEGER) * 1000 + CAST(substr(strftime('%f', created_at), 4) AS INTEGER)) * 1000000 AS base
          FROM receipts
        )
      ) AS numbered
      WHERE receipts.id = numbered.id;
      CREATE UNIQUE INDEX receipts_by_account_created ON receipts (account_id, created_ns);
      CREATE INDEX receipts_by_key_created ON receipts (account_id, key_id, created_ns);
      DROP INDEX receipts_by_account_newest;
      DROP INDEX receipts_by_key_newest;
    `,
  },
  {
    version: 8,
    name: 'holds carry the estimated cost a recovered request is charged',
    sql: `ALTER TABLE holds ADD COLUMN estimated_cost_nano INTEGER NOT NULL DEFAULT 0 CHECK (estimated_cost_nano >= 0);`,
  },
];

/**
 * Apply every migration not yet recorded in schema_migrations, then make sure the default
 * account exists. BEGIN IMMEDIATE takes the write lock before reading the applied versions,
 * so when two processes start at once the second waits (busy_timeout) and then finds
 * nothing left to do.
 */
export function applyMigrations(db: Database, now: () => string = () => new Date().toISOString()): void {
  const run = db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at TEXT NOT NULL
    ) STRICT`);
    const applied = new Set(db.prepare<[], number>('SELECT version FROM schema_migrations').pluck().all());
    const newest = migrations.at(-1)?.version ?? 0;
    const unknown = [...applied].filter((version) => version > newest);
    if (unknown.length) {
      throw new Error(`the database has schema version ${Math.max(...unknown)}, newer than this gateway knows (${newest}); upgrade the gateway`);
    }
    const record = db.prepare<[number, string, string]>('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      db.exec(migration.sql);
      record.run(migration.version, migration.name, now());
    }
    db.prepare<[string, string]>('INSERT OR IGNORE INTO accounts (id, balance_nano, created_at) VALUES (?, 0, ?)').run(DEFAULT_ACCOUNT_ID, now());
  });
  run.immediate();
}
