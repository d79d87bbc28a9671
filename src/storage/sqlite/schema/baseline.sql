-- The SQLite schema at version 8, where its history was squashed (later changes are in
-- migrations/). Tables are STRICT so a fractional or textual amount of money is refused, not
-- coerced. Every row carries account_id so one database can later hold several workspaces.
-- Column order is as the history left it (added columns last). SQLite keeps each CREATE's text
-- as written, so comments stand between statements, not inside them.

CREATE TABLE accounts (
  id TEXT PRIMARY KEY,
  balance_nano INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  monthly_budget_nano INTEGER CHECK (monthly_budget_nano >= 0)
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

-- A receipt is the charge record: it carries its cost. warnings: client settings a provider could
-- not honour. created_ns (receipt-order.ts) orders receipts and is unique per account, so a client
-- paging with before=<created_at> tells apart the receipts of one millisecond; every insert gives
-- it (the default only filled the rows there when it came).
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
  error_code TEXT,
  warnings TEXT NOT NULL DEFAULT '[]',
  created_ns INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE UNIQUE INDEX receipts_by_account_created ON receipts (account_id, created_ns);
-- The console filters receipts by key; per-model and per-status filters scan the account's index.
CREATE INDEX receipts_by_key_created ON receipts (account_id, key_id, created_ns);

-- Funds only ('charge' rows and receipt_id are left from when a charge had its own row: the
-- receipts carry their costs).
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

-- Only requests in flight have a row here; settling deletes it. The table stays as small as the
-- number of requests in flight, so its sums scan it whole: one b-tree, no index to update on
-- every request. estimated_cost_nano: what a request whose process died after calling the
-- provider is charged on recovery (orphan-receipt.ts).
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
  expires_at TEXT NOT NULL,
  estimated_cost_nano INTEGER NOT NULL DEFAULT 0 CHECK (estimated_cost_nano >= 0)
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

-- The partial unique index allows one owner per account: of two first sign-ins, the second's
-- insert conflicts and finds itself not a member.
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
