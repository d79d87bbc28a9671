-- The PostgreSQL schema's tables, indexes and constraints at version 20, where its history was
-- squashed (the functions are in functions/, one file each; later changes in migrations/).
-- Same tables and meaning as the SQLite schema. Money is bigint nano-USD with CHECKs, instants
-- are timestamptz, JSON is jsonb. Every row carries account_id so one database can hold several
-- workspaces; key_changes and sign_in_nonces alone are global. Column order is as the history
-- left it (added columns last).

-- No CHECK on the balance: a cost above its hold is charged in full and may overdraw.
CREATE TABLE accounts (
  id text PRIMARY KEY,
  balance_nano bigint NOT NULL DEFAULT 0,
  monthly_budget_nano bigint CHECK (monthly_budget_nano >= 0),
  created_at timestamptz NOT NULL
);

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  prefix text NOT NULL,
  hash text NOT NULL UNIQUE,
  scopes text[] NOT NULL,
  models text[],
  daily_limit_nano bigint CHECK (daily_limit_nano >= 0),
  rate_limit_per_minute integer CHECK (rate_limit_per_minute > 0),
  expires_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL,
  last_used_at timestamptz
);
CREATE INDEX api_keys_by_account ON api_keys (account_id, created_at DESC, id DESC);

-- One row, bumped in the transaction that inserts or revokes a key: processes compare it to drop
-- their key cache. Global because it is read before the key (and so its account) is known.
CREATE TABLE key_changes (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  version bigint NOT NULL
);
INSERT INTO key_changes (id, version) VALUES (true, 0);

-- A receipt is the charge record: its cost left the balance in the transaction that wrote it.
-- created_ns (receipt-order.ts) orders receipts and is unique per account: a client paging with
-- before=<created_at> tells apart the receipts of one millisecond. No foreign key to accounts:
-- every receipt comes from a key of its account (api_keys keeps its foreign key) and accounts are
-- never deleted; the check cost each receipt a lookup and a share lock on its account's row.
CREATE TABLE receipts (
  id text PRIMARY KEY,
  request_id text NOT NULL,
  account_id text NOT NULL,
  key_id text NOT NULL,
  key_prefix text NOT NULL,
  created_at timestamptz NOT NULL,
  status text NOT NULL CHECK (status IN ('succeeded', 'failed', 'cancelled')),
  endpoint text NOT NULL,
  stream boolean NOT NULL,
  requested_model text,
  answering_model text,
  attempts jsonb NOT NULL,
  usage jsonb,
  usage_estimated boolean NOT NULL,
  prices jsonb,
  hold_nano bigint NOT NULL CHECK (hold_nano >= 0),
  cost_nano bigint NOT NULL CHECK (cost_nano >= 0),
  latency_ms double precision NOT NULL,
  time_to_first_token_ms double precision,
  error_code text,
  -- Client settings a provider could not honour.
  warnings jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_ns bigint NOT NULL
);
CREATE UNIQUE INDEX receipts_by_account_created ON receipts (account_id, created_ns);
-- The console filters receipts by key.
CREATE INDEX receipts_by_key_created ON receipts (account_id, key_id, created_ns);

-- Funds only; charges are the receipts' costs.
CREATE TABLE ledger_entries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  at timestamptz NOT NULL,
  kind text NOT NULL CHECK (kind = 'funds'),
  amount_nano bigint NOT NULL CHECK (amount_nano > 0),
  note text
);
CREATE INDEX ledger_entries_by_account ON ledger_entries (account_id, kind);
-- The console pages funds newest first.
CREATE INDEX ledger_entries_by_account_newest ON ledger_entries (account_id, id DESC);

-- No foreign key: an audit entry must never fail to be written.
CREATE TABLE audit_log (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id text NOT NULL,
  at timestamptz NOT NULL,
  actor text NOT NULL,
  action text NOT NULL,
  detail jsonb NOT NULL
);
CREATE INDEX audit_log_by_account ON audit_log (account_id, id DESC);

-- Only requests in flight have a row; settling deletes it. Every request inserts and deletes one,
-- so autovacuum counts dead rows, not a fraction of a table this small. estimated_cost_nano is
-- what a request whose process died after calling the provider is charged on recovery (the
-- prompt's input at the first candidate's price: orphan-receipt.ts). lease_id: the balance lease
-- the hold was placed in, whose reservation covers it (null: counted on its own).
CREATE TABLE holds (
  id text PRIMARY KEY,
  request_id text NOT NULL,
  account_id text NOT NULL REFERENCES accounts (id),
  key_id text NOT NULL,
  key_prefix text NOT NULL,
  endpoint text NOT NULL,
  stream boolean NOT NULL,
  requested_model text,
  amount_nano bigint NOT NULL CHECK (amount_nano >= 0),
  day text NOT NULL,
  month text NOT NULL,
  created_at timestamptz NOT NULL,
  owner text NOT NULL,
  expires_at timestamptz NOT NULL,
  estimated_cost_nano bigint NOT NULL DEFAULT 0 CHECK (estimated_cost_nano >= 0),
  lease_id text
) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);
CREATE INDEX holds_by_account ON holds (account_id);

CREATE TABLE key_daily_spend (
  key_id text NOT NULL,
  day text NOT NULL,
  account_id text NOT NULL,
  charged_nano bigint NOT NULL CHECK (charged_nano >= 0),
  PRIMARY KEY (key_id, day)
);

CREATE TABLE account_monthly_spend (
  account_id text NOT NULL,
  month text NOT NULL,
  charged_nano bigint NOT NULL CHECK (charged_nano >= 0),
  PRIMARY KEY (account_id, month)
);

-- json, not jsonb: input, result and event data are opaque to the store and come back exactly as
-- sent (jsonb would reorder keys), as on SQLite.
CREATE TABLE fix_quotes (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  key_id text NOT NULL,
  agent text NOT NULL,
  tier text NOT NULL CHECK (tier IN ('fast', 'balanced', 'best')),
  input json NOT NULL,
  input_tokens integer NOT NULL CHECK (input_tokens >= 0),
  estimated_cost_nano bigint NOT NULL CHECK (estimated_cost_nano >= 0),
  max_cost_nano bigint NOT NULL CHECK (max_cost_nano >= 0),
  step_budget integer NOT NULL CHECK (step_budget >= 0),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);

-- UNIQUE (quote_id) is what makes a quote run at most once, whatever locks the starts take. No
-- foreign key to receipts: the receipt is written when the run ends; until then its hold (same id
-- as receipt_id) is in flight.
CREATE TABLE fix_runs (
  id text PRIMARY KEY,
  quote_id text NOT NULL UNIQUE REFERENCES fix_quotes (id),
  account_id text NOT NULL REFERENCES accounts (id),
  key_id text NOT NULL,
  receipt_id text NOT NULL UNIQUE,
  agent text NOT NULL,
  tier text NOT NULL CHECK (tier IN ('fast', 'balanced', 'best')),
  max_cost_nano bigint NOT NULL CHECK (max_cost_nano >= 0),
  status text NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'cost_cap_reached', 'cancelled')),
  created_at timestamptz NOT NULL,
  finished_at timestamptz,
  result json,
  cancel_requested boolean NOT NULL DEFAULT false
);

CREATE TABLE fix_run_events (
  run_id text NOT NULL REFERENCES fix_runs (id),
  sequence integer NOT NULL CHECK (sequence > 0),
  at timestamptz NOT NULL,
  type text NOT NULL,
  data json NOT NULL,
  PRIMARY KEY (run_id, sequence)
);

-- The partial unique index allows one owner per account. Two first sign-ins racing: the second's
-- INSERT ... ON CONFLICT DO NOTHING waits on the first's uncommitted index entry, then inserts
-- nothing once it commits, and finds itself not a member.
CREATE TABLE members (
  account_id text NOT NULL REFERENCES accounts (id),
  address text NOT NULL CHECK (address = lower(address)),
  role text NOT NULL CHECK (role IN ('owner', 'member')),
  added_at timestamptz NOT NULL,
  added_by text NOT NULL,
  PRIMARY KEY (account_id, address)
);
CREATE UNIQUE INDEX members_one_owner ON members (account_id) WHERE role = 'owner';

-- Sessions outlive a removed member's row (they are ended, not deleted): no foreign key to members.
CREATE TABLE sessions (
  id text PRIMARY KEY,
  token_hash text NOT NULL UNIQUE,
  account_id text NOT NULL REFERENCES accounts (id),
  address text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  ended_at timestamptz
);
CREATE INDEX sessions_open_by_address ON sessions (account_id, address) WHERE ended_at IS NULL;

-- Global, as key_changes: a nonce is issued before anyone is signed in.
CREATE TABLE sign_in_nonces (
  nonce text PRIMARY KEY,
  address text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);

CREATE TABLE alias_rules (
  account_id text NOT NULL REFERENCES accounts (id),
  alias text NOT NULL,
  candidates text[] NOT NULL,
  reasoning text NOT NULL CHECK (reasoning IN ('low', 'medium', 'xhigh')),
  updated_at timestamptz NOT NULL,
  updated_by text NOT NULL,
  PRIMARY KEY (account_id, alias)
);

-- A slice of an account's balance (and of its month's budget) reserved by one process, which
-- places request holds inside it without locking the account row (postgres-balance-leases.ts).
-- Three running totals, never decreasing: granted (every reservation the lease was given,
-- including what was since charged), charged (the costs of the receipts settled through it) and
-- folded (the part of charged already taken off accounts.balance_nano and added to the month's
-- spend). Hence, for its account:
--   balance  = accounts.balance_nano - sum(charged - folded)
--   reserved = sum(greatest(granted - charged, 0)), taken from what other holds may use;
-- the holds placed in it (lease_id set) are inside that reservation and not counted again.
-- A lease may belong to one key and UTC day (key_id, day): it then also reserves that much of the
-- key's daily limit. What a key's day has used is its charges, its holds outside its key leases,
-- and what its key leases still reserve (granted - charged; their charges are in key_daily_spend
-- already, with the receipts).
CREATE TABLE balance_leases (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  owner text NOT NULL,
  month text NOT NULL,
  granted_nano bigint NOT NULL CHECK (granted_nano >= 0),
  charged_nano bigint NOT NULL DEFAULT 0 CHECK (charged_nano >= 0),
  folded_nano bigint NOT NULL DEFAULT 0 CHECK (folded_nano >= 0 AND folded_nano <= charged_nano),
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  key_id text,
  day text
);
CREATE INDEX balance_leases_by_account ON balance_leases (account_id);
CREATE INDEX balance_leases_by_key_day ON balance_leases (key_id, day) WHERE key_id IS NOT NULL;

-- Names this ledger where holds are journaled outside it (a Redis hash per process, see
-- postgres-hold-journal.ts), so two databases sharing one Redis never read each other's.
CREATE TABLE ledger_identity (id text PRIMARY KEY);
INSERT INTO ledger_identity (id) VALUES (md5(random()::text || clock_timestamp()::text));
