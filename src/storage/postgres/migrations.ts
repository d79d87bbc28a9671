import type { PoolClient } from 'pg';
import type { Migration } from '../migration.ts';
import { DEFAULT_ACCOUNT_ID } from '../store.ts';

/**
 * PostgreSQL schema history, oldest first. Never edit an applied migration; append a new one.
 * Same tables and meaning as the SQLite schema at its newest version. Money is BIGINT nano-USD
 * with CHECKs, instants are timestamptz, JSON is jsonb. Every row carries account_id so one
 * database can hold several workspaces; key_changes alone is global (see below).
 */
export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'accounts, keys, receipts, ledger, audit, holds, daily and monthly spend',
    sql: `
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

      -- One row, bumped in the transaction that inserts or revokes a key: processes compare it
      -- to drop their key cache. Global because it is read before the key (and so its account)
      -- is known.
      CREATE TABLE key_changes (
        id boolean PRIMARY KEY DEFAULT true CHECK (id),
        version bigint NOT NULL
      );
      INSERT INTO key_changes (id, version) VALUES (true, 0);

      -- A receipt is the charge record: its cost left the balance in the transaction that wrote it.
      CREATE TABLE receipts (
        id text PRIMARY KEY,
        request_id text NOT NULL,
        account_id text NOT NULL REFERENCES accounts (id),
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
        error_code text
      );
      CREATE INDEX receipts_by_account_newest ON receipts (account_id, created_at DESC, id DESC);

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

      -- Only requests in flight have a row; settling deletes it. Every request inserts and
      -- deletes one, so autovacuum counts dead rows, not a fraction of a table this small.
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
        expires_at timestamptz NOT NULL
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
    `,
  },
  {
    version: 2,
    name: 'place a hold and record a receipt in one statement each',
    sql: `
      -- Locks the account row first, so placements, charges and top-ups of one account take
      -- turns; every later statement (READ COMMITTED, volatile function) sees what the previous
      -- holder committed. FOR NO KEY UPDATE, not FOR UPDATE: it conflicts with every writer of
      -- the row but not with the foreign-key checks of inserts into holds and receipts.
      -- A key belongs to one account, so its daily sums are covered by the same lock.
      CREATE FUNCTION gateway_place_hold(
        p_id text, p_request_id text, p_account_id text, p_key_id text, p_key_prefix text,
        p_endpoint text, p_stream boolean, p_requested_model text, p_amount_nano bigint,
        p_day text, p_month text, p_created_at timestamptz, p_owner text, p_expires_at timestamptz,
        p_daily_limit_nano bigint
      ) RETURNS TABLE (placed boolean, reason text, remaining_nano bigint)
      LANGUAGE plpgsql AS $$
      DECLARE
        v_balance bigint;
        v_budget bigint;
        v_available bigint;
        v_used bigint;
      BEGIN
        SELECT a.balance_nano, a.monthly_budget_nano INTO v_balance, v_budget
          FROM accounts a WHERE a.id = p_account_id FOR NO KEY UPDATE;
        v_available := coalesce(v_balance, 0)
          - (SELECT coalesce(sum(h.amount_nano), 0) FROM holds h WHERE h.account_id = p_account_id);
        IF p_amount_nano > v_available THEN
          RETURN QUERY SELECT false, 'insufficient_balance'::text, v_available;
          RETURN;
        END IF;
        IF p_daily_limit_nano IS NOT NULL THEN
          v_used := coalesce((SELECT s.charged_nano FROM key_daily_spend s WHERE s.key_id = p_key_id AND s.day = p_day), 0)
            + (SELECT coalesce(sum(h.amount_nano), 0) FROM holds h
                WHERE h.account_id = p_account_id AND h.key_id = p_key_id AND h.day = p_day);
          IF v_used + p_amount_nano > p_daily_limit_nano THEN
            RETURN QUERY SELECT false, 'daily_limit'::text, p_daily_limit_nano - v_used;
            RETURN;
          END IF;
        END IF;
        IF v_budget IS NOT NULL THEN
          v_used := coalesce((SELECT s.charged_nano FROM account_monthly_spend s WHERE s.account_id = p_account_id AND s.month = p_month), 0)
            + (SELECT coalesce(sum(h.amount_nano), 0) FROM holds h WHERE h.account_id = p_account_id AND h.month = p_month);
          IF v_used + p_amount_nano > v_budget THEN
            RETURN QUERY SELECT false, 'monthly_budget'::text, v_budget - v_used;
            RETURN;
          END IF;
        END IF;
        INSERT INTO holds (id, request_id, account_id, key_id, key_prefix, endpoint, stream, requested_model,
                           amount_nano, day, month, created_at, owner, expires_at)
        VALUES (p_id, p_request_id, p_account_id, p_key_id, p_key_prefix, p_endpoint, p_stream, p_requested_model,
                p_amount_nano, p_day, p_month, p_created_at, p_owner, p_expires_at);
        RETURN QUERY SELECT true, NULL::text, NULL::bigint;
      END
      $$;

      -- The receipt, its charge (balance, key day, account month), the release of its hold and
      -- the key's last use, all or nothing. The account row is written first, as placing a hold
      -- locks it first: one lock order, no deadlock between the two.
      CREATE FUNCTION gateway_record_receipt(
        p_id text, p_request_id text, p_account_id text, p_key_id text, p_key_prefix text,
        p_created_at timestamptz, p_status text, p_endpoint text, p_stream boolean,
        p_requested_model text, p_answering_model text, p_attempts jsonb, p_usage jsonb,
        p_usage_estimated boolean, p_prices jsonb, p_hold_nano bigint, p_cost_nano bigint,
        p_latency_ms double precision, p_time_to_first_token_ms double precision, p_error_code text,
        p_touch_key boolean
      ) RETURNS void
      LANGUAGE plpgsql AS $$
      DECLARE
        v_day text;
        v_month text;
      BEGIN
        IF p_cost_nano > 0 THEN
          UPDATE accounts SET balance_nano = balance_nano - p_cost_nano WHERE id = p_account_id;
        END IF;
        INSERT INTO receipts (id, request_id, account_id, key_id, key_prefix, created_at, status, endpoint, stream,
                              requested_model, answering_model, attempts, usage, usage_estimated, prices,
                              hold_nano, cost_nano, latency_ms, time_to_first_token_ms, error_code)
        VALUES (p_id, p_request_id, p_account_id, p_key_id, p_key_prefix, p_created_at, p_status, p_endpoint, p_stream,
                p_requested_model, p_answering_model, p_attempts, p_usage, p_usage_estimated, p_prices,
                p_hold_nano, p_cost_nano, p_latency_ms, p_time_to_first_token_ms, p_error_code);
        DELETE FROM holds WHERE id = p_id RETURNING day, month INTO v_day, v_month;
        IF p_cost_nano > 0 THEN
          -- Without its hold (recovered, or never placed) a cost counts on the receipt's UTC day.
          v_day := coalesce(v_day, to_char(p_created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'));
          v_month := coalesce(v_month, to_char(p_created_at AT TIME ZONE 'UTC', 'YYYY-MM'));
          INSERT INTO key_daily_spend AS s (key_id, day, account_id, charged_nano)
          VALUES (p_key_id, v_day, p_account_id, p_cost_nano)
          ON CONFLICT (key_id, day) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
          INSERT INTO account_monthly_spend AS s (account_id, month, charged_nano)
          VALUES (p_account_id, v_month, p_cost_nano)
          ON CONFLICT (account_id, month) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
        END IF;
        -- Never move backwards: a long stream can finish after a later request's receipt.
        IF p_touch_key THEN
          UPDATE api_keys SET last_used_at = p_created_at
          WHERE id = p_key_id AND (last_used_at IS NULL OR last_used_at < p_created_at);
        END IF;
      END
      $$;
    `,
  },
  {
    version: 3,
    name: 'fix agents: quotes, runs, run events; start a run in one statement',
    sql: `
      -- json, not jsonb: input, result and event data are opaque to the store and come back
      -- exactly as sent (jsonb would reorder keys), as on SQLite.
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

      -- UNIQUE (quote_id) is what makes a quote run at most once, whatever locks the starts
      -- take. No foreign key to receipts: the receipt is written when the run ends; until then
      -- its hold (same id as receipt_id) is in flight.
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

      -- The run first, then its hold: a second start of the quote waits on the first's
      -- uncommitted row in the unique index, then inserts nothing and gets the run's id back.
      -- A refused hold deletes the run just inserted, so nothing is left. The hold is placed by
      -- gateway_place_hold itself (account row lock, checks, insert).
      CREATE FUNCTION gateway_start_fix_run(
        p_run_id text, p_quote_id text, p_account_id text, p_key_id text, p_receipt_id text,
        p_agent text, p_tier text, p_max_cost_nano bigint, p_status text, p_created_at timestamptz,
        p_finished_at timestamptz, p_result json, p_cancel_requested boolean,
        p_request_id text, p_key_prefix text, p_endpoint text, p_stream boolean, p_requested_model text,
        p_amount_nano bigint, p_day text, p_month text, p_hold_created_at timestamptz, p_owner text,
        p_expires_at timestamptz, p_daily_limit_nano bigint
      ) RETURNS TABLE (started boolean, reason text, remaining_nano bigint, existing_run_id text)
      LANGUAGE plpgsql AS $$
      DECLARE
        v_inserted text;
        v_decision record;
      BEGIN
        INSERT INTO fix_runs (id, quote_id, account_id, key_id, receipt_id, agent, tier, max_cost_nano, status,
                              created_at, finished_at, result, cancel_requested)
        VALUES (p_run_id, p_quote_id, p_account_id, p_key_id, p_receipt_id, p_agent, p_tier, p_max_cost_nano, p_status,
                p_created_at, p_finished_at, p_result, p_cancel_requested)
        ON CONFLICT (quote_id) DO NOTHING
        RETURNING id INTO v_inserted;
        IF v_inserted IS NULL THEN
          RETURN QUERY SELECT false, NULL::text, NULL::bigint, r.id FROM fix_runs r WHERE r.quote_id = p_quote_id;
          RETURN;
        END IF;
        SELECT * INTO v_decision FROM gateway_place_hold(
          p_receipt_id, p_request_id, p_account_id, p_key_id, p_key_prefix, p_endpoint, p_stream, p_requested_model,
          p_amount_nano, p_day, p_month, p_hold_created_at, p_owner, p_expires_at, p_daily_limit_nano);
        IF NOT v_decision.placed THEN
          DELETE FROM fix_runs WHERE id = p_run_id;
          RETURN QUERY SELECT false, v_decision.reason, v_decision.remaining_nano, NULL::text;
          RETURN;
        END IF;
        RETURN QUERY SELECT true, NULL::text, NULL::bigint, NULL::text;
      END
      $$;
    `,
  },
  {
    version: 4,
    name: 'console: members, sessions, sign-in nonces, alias rules',
    sql: `
      -- The partial unique index allows one owner per account. Two first sign-ins racing: the
      -- second's INSERT ... ON CONFLICT DO NOTHING waits on the first's uncommitted index entry,
      -- then inserts nothing once it commits, and finds itself not a member.
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

      -- The console filters receipts by key and pages funds newest first.
      CREATE INDEX receipts_by_key_newest ON receipts (account_id, key_id, created_at DESC, id DESC);
      CREATE INDEX ledger_entries_by_account_newest ON ledger_entries (account_id, id DESC);
    `,
  },
  {
    version: 5,
    name: 'receipts carry warnings: client settings a provider could not honour',
    sql: `
      ALTER TABLE receipts ADD COLUMN warnings jsonb NOT NULL DEFAULT '[]'::jsonb;
      -- The same settlement as before, with the receipt's warnings; the old signature goes.
      DROP FUNCTION gateway_record_receipt(text, text, text, text, text, timestamptz, text, text, boolean, text, text, jsonb, jsonb,
        boolean, jsonb, bigint, bigint, double precision, double precision, text, boolean);
      CREATE FUNCTION gateway_record_receipt(
        p_id text, p_request_id text, p_account_id text, p_key_id text, p_key_prefix text,
        p_created_at timestamptz, p_status text, p_endpoint text, p_stream boolean,
        p_requested_model text, p_answering_model text, p_attempts jsonb, p_usage jsonb,
        p_usage_estimated boolean, p_prices jsonb, p_hold_nano bigint, p_cost_nano bigint,
        p_latency_ms double precision, p_time_to_first_token_ms double precision, p_error_code text,
        p_touch_key boolean, p_warnings jsonb
      ) RETURNS void
      LANGUAGE plpgsql AS $$
      DECLARE
        v_day text;
        v_month text;
      BEGIN
        IF p_cost_nano > 0 THEN
          UPDATE accounts SET balance_nano = balance_nano - p_cost_nano WHERE id = p_account_id;
        END IF;
        INSERT INTO receipts (id, request_id, account_id, key_id, key_prefix, created_at, status, endpoint, stream,
                              requested_model, answering_model, attempts, warnings, usage, usage_estimated, prices,
                              hold_nano, cost_nano, latency_ms, time_to_first_token_ms, error_code)
        VALUES (p_id, p_request_id, p_account_id, p_key_id, p_key_prefix, p_created_at, p_status, p_endpoint, p_stream,
                p_requested_model, p_answering_model, p_attempts, p_warnings, p_usage, p_usage_estimated, p_prices,
                p_hold_nano, p_cost_nano, p_latency_ms, p_time_to_first_token_ms, p_error_code);
        DELETE FROM holds WHERE id = p_id RETURNING day, month INTO v_day, v_month;
        IF p_cost_nano > 0 THEN
          -- Without its hold (recovered, or never placed) a cost counts on the receipt's UTC day.
          v_day := coalesce(v_day, to_char(p_created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'));
          v_month := coalesce(v_month, to_char(p_created_at AT TIME ZONE 'UTC', 'YYYY-MM'));
          INSERT INTO key_daily_spend AS s (key_id, day, account_id, charged_nano)
          VALUES (p_key_id, v_day, p_account_id, p_cost_nano)
          ON CONFLICT (key_id, day) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
          INSERT INTO account_monthly_spend AS s (account_id, month, charged_nano)
          VALUES (p_account_id, v_month, p_cost_nano)
          ON CONFLICT (account_id, month) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
        END IF;
        -- Never move backwards: a long stream can finish after a later request's receipt.
        IF p_touch_key THEN
          UPDATE api_keys SET last_used_at = p_created_at
          WHERE id = p_key_id AND (last_used_at IS NULL OR last_used_at < p_created_at);
        END IF;
      END
      $$;
    `,
  },
  {
    version: 6,
    name: 'receipts ordered by a nanosecond instant unique per account',
    sql: `
      -- Receipts of one millisecond were told apart by id alone, which a client paging with
      -- before=<created_at> never sees; timestamptz keeps microseconds at most. created_ns
      -- (receipt-order.ts) is unique per account.
      ALTER TABLE receipts ADD COLUMN created_ns bigint;
      -- Existing rows keep their order (created_at, then id): the k-th of an instant gets k - 1 ns more.
      UPDATE receipts AS r SET created_ns = numbered.created_ns
      FROM (
        SELECT id, base + row_number() OVER (PARTITION BY account_id, base ORDER BY id) - 1 AS created_ns
        FROM (
          SELECT id, account_id,
                 extract(epoch FROM date_trunc('second', created_at))::bigint * 1000000000
                   + (extract(microseconds FROM created_at)::bigint % 1000000) * 1000 AS base
          FROM receipts
        ) AS based
      ) AS numbered
      WHERE r.id = numbered.id;
      ALTER TABLE receipts ALTER COLUMN created_ns SET NOT NULL;
      CREATE UNIQUE INDEX receipts_by_account_created ON receipts (account_id, created_ns);
      CREATE INDEX receipts_by_key_created ON receipts (account_id, key_id, created_ns);
      DROP INDEX receipts_by_account_newest;
      DROP INDEX receipts_by_key_newest;

      -- The same settlement, the receipt at a free created_ns from p_created_ns up, which it
      -- returns. Two settlements of one account finding the same value: the second insert waits
      -- for the first to commit, inserts nothing, and looks again past that value. The wait is
      -- on that one index entry; no row is locked to take turns.
      DROP FUNCTION gateway_record_receipt(text, text, text, text, text, timestamptz, text, text, boolean, text, text, jsonb, jsonb,
        boolean, jsonb, bigint, bigint, double precision, double precision, text, boolean, jsonb);
      CREATE FUNCTION gateway_record_receipt(
        p_id text, p_request_id text, p_account_id text, p_key_id text, p_key_prefix text,
        p_created_at timestamptz, p_status text, p_endpoint text, p_stream boolean,
        p_requested_model text, p_answering_model text, p_attempts jsonb, p_usage jsonb,
        p_usage_estimated boolean, p_prices jsonb, p_hold_nano bigint, p_cost_nano bigint,
        p_latency_ms double precision, p_time_to_first_token_ms double precision, p_error_code text,
        p_touch_key boolean, p_warnings jsonb, p_created_ns bigint
      ) RETURNS bigint
      LANGUAGE plpgsql AS $$
      DECLARE
        v_day text;
        v_month text;
        v_ns bigint := p_created_ns;
      BEGIN
        IF p_cost_nano > 0 THEN
          UPDATE accounts SET balance_nano = balance_nano - p_cost_nano WHERE id = p_account_id;
        END IF;
        LOOP
          -- Above every value taken from v_ns to the end of its millisecond, as committed when this statement starts.
          SELECT coalesce(max(r.created_ns) + 1, v_ns) INTO v_ns FROM receipts r
          WHERE r.account_id = p_account_id AND r.created_ns >= v_ns
            AND r.created_ns < v_ns - (v_ns % 1000000 + 1000000) % 1000000 + 1000000;
          INSERT INTO receipts (id, request_id, account_id, key_id, key_prefix, created_at, created_ns, status, endpoint, stream,
                                requested_model, answering_model, attempts, warnings, usage, usage_estimated, prices,
                                hold_nano, cost_nano, latency_ms, time_to_first_token_ms, error_code)
          VALUES (p_id, p_request_id, p_account_id, p_key_id, p_key_prefix, p_created_at, v_ns, p_status, p_endpoint, p_stream,
                  p_requested_model, p_answering_model, p_attempts, p_warnings, p_usage, p_usage_estimated, p_prices,
                  p_hold_nano, p_cost_nano, p_latency_ms, p_time_to_first_token_ms, p_error_code)
          ON CONFLICT (account_id, created_ns) DO NOTHING;
          EXIT WHEN FOUND;
          -- Taken by a settlement that committed while this one waited, as others waiting may find
          -- too: look again from a little past it, at random, so they do not all want the next one.
          v_ns := v_ns + 1 + floor(random() * 64)::bigint;
        END LOOP;
        DELETE FROM holds WHERE id = p_id RETURNING day, month INTO v_day, v_month;
        IF p_cost_nano > 0 THEN
          -- Without its hold (recovered, or never placed) a cost counts on the receipt's UTC day.
          v_day := coalesce(v_day, to_char(p_created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'));
          v_month := coalesce(v_month, to_char(p_created_at AT TIME ZONE 'UTC', 'YYYY-MM'));
          INSERT INTO key_daily_spend AS s (key_id, day, account_id, charged_nano)
          VALUES (p_key_id, v_day, p_account_id, p_cost_nano)
          ON CONFLICT (key_id, day) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
          INSERT INTO account_monthly_spend AS s (account_id, month, charged_nano)
          VALUES (p_account_id, v_month, p_cost_nano)
          ON CONFLICT (account_id, month) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
        END IF;
        -- Never move backwards: a long stream can finish after a later request's receipt.
        IF p_touch_key THEN
          UPDATE api_keys SET last_used_at = p_created_at
          WHERE id = p_key_id AND (last_used_at IS NULL OR last_used_at < p_created_at);
        END IF;
        RETURN v_ns;
      END
      $$;
    `,
  },
  {
    version: 7,
    name: 'group commit: a batch of holds and settlements per round trip; idempotent settlement; estimated cost on holds',
    sql: `
      -- What a request whose process died after calling the provider is charged on recovery
      -- (the prompt's input at the first candidate's price): see orphan-receipt.ts.
      ALTER TABLE holds ADD COLUMN estimated_cost_nano bigint NOT NULL DEFAULT 0 CHECK (estimated_cost_nano >= 0);

      -- As in migration 2, plus: a hold whose id is already there is placed (a retry after a
      -- reply that was lost), and the estimated cost is kept.
      DROP FUNCTION gateway_place_hold(text, text, text, text, text, text, boolean, text, bigint, text, text, timestamptz, text, timestamptz, bigint);
      CREATE FUNCTION gateway_place_hold(
        p_id text, p_request_id text, p_account_id text, p_key_id text, p_key_prefix text,
        p_endpoint text, p_stream boolean, p_requested_model text, p_amount_nano bigint,
        p_day text, p_month text, p_created_at timestamptz, p_owner text, p_expires_at timestamptz,
        p_daily_limit_nano bigint, p_estimated_cost_nano bigint DEFAULT 0
      ) RETURNS TABLE (placed boolean, reason text, remaining_nano bigint)
      LANGUAGE plpgsql AS $$
      DECLARE
        v_balance bigint;
        v_budget bigint;
        v_available bigint;
        v_used bigint;
      BEGIN
        SELECT a.balance_nano, a.monthly_budget_nano INTO v_balance, v_budget
          FROM accounts a WHERE a.id = p_account_id FOR NO KEY UPDATE;
        IF EXISTS (SELECT 1 FROM holds h WHERE h.id = p_id) THEN
          RETURN QUERY SELECT true, NULL::text, NULL::bigint;
          RETURN;
        END IF;
        v_available := coalesce(v_balance, 0)
          - (SELECT coalesce(sum(h.amount_nano), 0) FROM holds h WHERE h.account_id = p_account_id);
        IF p_amount_nano > v_available THEN
          RETURN QUERY SELECT false, 'insufficient_balance'::text, v_available;
          RETURN;
        END IF;
        IF p_daily_limit_nano IS NOT NULL THEN
          v_used := coalesce((SELECT s.charged_nano FROM key_daily_spend s WHERE s.key_id = p_key_id AND s.day = p_day), 0)
            + (SELECT coalesce(sum(h.amount_nano), 0) FROM holds h
                WHERE h.account_id = p_account_id AND h.key_id = p_key_id AND h.day = p_day);
          IF v_used + p_amount_nano > p_daily_limit_nano THEN
            RETURN QUERY SELECT false, 'daily_limit'::text, p_daily_limit_nano - v_used;
            RETURN;
          END IF;
        END IF;
        IF v_budget IS NOT NULL THEN
          v_used := coalesce((SELECT s.charged_nano FROM account_monthly_spend s WHERE s.account_id = p_account_id AND s.month = p_month), 0)
            + (SELECT coalesce(sum(h.amount_nano), 0) FROM holds h WHERE h.account_id = p_account_id AND h.month = p_month);
          IF v_used + p_amount_nano > v_budget THEN
            RETURN QUERY SELECT false, 'monthly_budget'::text, v_budget - v_used;
            RETURN;
          END IF;
        END IF;
        INSERT INTO holds (id, request_id, account_id, key_id, key_prefix, endpoint, stream, requested_model,
                           amount_nano, day, month, created_at, owner, expires_at, estimated_cost_nano)
        VALUES (p_id, p_request_id, p_account_id, p_key_id, p_key_prefix, p_endpoint, p_stream, p_requested_model,
                p_amount_nano, p_day, p_month, p_created_at, p_owner, p_expires_at, coalesce(p_estimated_cost_nano, 0));
        RETURN QUERY SELECT true, NULL::text, NULL::bigint;
      END
      $$;

      -- As in migration 6, and idempotent: a receipt whose id is already there (a retry after a
      -- commit whose reply was lost) is not written or charged again; its created_ns is returned
      -- and a hold of that id still there is dropped. A charging settlement checks under the
      -- account row lock, so two copies of one settlement take turns and the second finds the first.
      DROP FUNCTION gateway_record_receipt(text, text, text, text, text, timestamptz, text, text, boolean, text, text, jsonb, jsonb,
        boolean, jsonb, bigint, bigint, double precision, double precision, text, boolean, jsonb, bigint);
      CREATE FUNCTION gateway_record_receipt(
        p_id text, p_request_id text, p_account_id text, p_key_id text, p_key_prefix text,
        p_created_at timestamptz, p_status text, p_endpoint text, p_stream boolean,
        p_requested_model text, p_answering_model text, p_attempts jsonb, p_usage jsonb,
        p_usage_estimated boolean, p_prices jsonb, p_hold_nano bigint, p_cost_nano bigint,
        p_latency_ms double precision, p_time_to_first_token_ms double precision, p_error_code text,
        p_touch_key boolean, p_warnings jsonb, p_created_ns bigint
      ) RETURNS bigint
      LANGUAGE plpgsql AS $$
      DECLARE
        v_day text;
        v_month text;
        v_ns bigint := p_created_ns;
        v_existing bigint;
      BEGIN
        IF p_cost_nano > 0 THEN
          PERFORM 1 FROM accounts WHERE id = p_account_id FOR NO KEY UPDATE;
        END IF;
        SELECT r.created_ns INTO v_existing FROM receipts r WHERE r.id = p_id;
        IF FOUND THEN
          DELETE FROM holds WHERE id = p_id;
          RETURN v_existing;
        END IF;
        IF p_cost_nano > 0 THEN
          UPDATE accounts SET balance_nano = balance_nano - p_cost_nano WHERE id = p_account_id;
        END IF;
        LOOP
          -- Above every value taken from v_ns to the end of its millisecond, as committed when this statement starts.
          SELECT coalesce(max(r.created_ns) + 1, v_ns) INTO v_ns FROM receipts r
          WHERE r.account_id = p_account_id AND r.created_ns >= v_ns
            AND r.created_ns < v_ns - (v_ns % 1000000 + 1000000) % 1000000 + 1000000;
          INSERT INTO receipts (id, request_id, account_id, key_id, key_prefix, created_at, created_ns, status, endpoint, stream,
                                requested_model, answering_model, attempts, warnings, usage, usage_estimated, prices,
                                hold_nano, cost_nano, latency_ms, time_to_first_token_ms, error_code)
          VALUES (p_id, p_request_id, p_account_id, p_key_id, p_key_prefix, p_created_at, v_ns, p_status, p_endpoint, p_stream,
                  p_requested_model, p_answering_model, p_attempts, p_warnings, p_usage, p_usage_estimated, p_prices,
                  p_hold_nano, p_cost_nano, p_latency_ms, p_time_to_first_token_ms, p_error_code)
          ON CONFLICT DO NOTHING;
          EXIT WHEN FOUND;
          -- A free-of-charge copy of this settlement committed meanwhile: it stands.
          SELECT r.created_ns INTO v_existing FROM receipts r WHERE r.id = p_id;
          IF FOUND THEN
            DELETE FROM holds WHERE id = p_id;
            RETURN v_existing;
          END IF;
          -- Taken by a settlement that committed while this one waited, as others waiting may find
          -- too: look again from a little past it, at random, so they do not all want the next one.
          v_ns := v_ns + 1 + floor(random() * 64)::bigint;
        END LOOP;
        DELETE FROM holds WHERE id = p_id RETURNING day, month INTO v_day, v_month;
        IF p_cost_nano > 0 THEN
          -- Without its hold (recovered, or never placed) a cost counts on the receipt's UTC day.
          v_day := coalesce(v_day, to_char(p_created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'));
          v_month := coalesce(v_month, to_char(p_created_at AT TIME ZONE 'UTC', 'YYYY-MM'));
          INSERT INTO key_daily_spend AS s (key_id, day, account_id, charged_nano)
          VALUES (p_key_id, v_day, p_account_id, p_cost_nano)
          ON CONFLICT (key_id, day) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
          INSERT INTO account_monthly_spend AS s (account_id, month, charged_nano)
          VALUES (p_account_id, v_month, p_cost_nano)
          ON CONFLICT (account_id, month) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
        END IF;
        -- Never move backwards: a long stream can finish after a later request's receipt.
        IF p_touch_key THEN
          UPDATE api_keys SET last_used_at = p_created_at
          WHERE id = p_key_id AND (last_used_at IS NULL OR last_used_at < p_created_at);
        END IF;
        RETURN v_ns;
      END
      $$;

      -- Group commit (postgres-group-commit.ts): the holds and settlements one process gathered
      -- while its previous batch was out, in one statement and one transaction. The accounts of
      -- the batch are locked once, up front and in id order, so two batches never deadlock; then
      -- each operation runs as its own function would, in the order given. Any error undoes the
      -- whole batch and the caller runs its operations one by one.
      CREATE FUNCTION gateway_apply_batch(p_ops jsonb) RETURNS jsonb
      LANGUAGE plpgsql AS $$
      DECLARE
        v_op jsonb;
        v_results jsonb[] := '{}';
        v_decision record;
        v_ns bigint;
      BEGIN
        PERFORM 1 FROM accounts
          WHERE id IN (SELECT DISTINCT o->>'account_id' FROM jsonb_array_elements(p_ops) AS o)
          ORDER BY id FOR NO KEY UPDATE;
        FOR v_op IN SELECT value FROM jsonb_array_elements(p_ops) LOOP
          IF v_op->>'op' = 'hold' THEN
            SELECT * INTO v_decision FROM gateway_place_hold(
              v_op->>'id', v_op->>'request_id', v_op->>'account_id', v_op->>'key_id', v_op->>'key_prefix',
              v_op->>'endpoint', (v_op->>'stream')::boolean, v_op->>'requested_model', (v_op->>'amount_nano')::bigint,
              v_op->>'day', v_op->>'month', (v_op->>'created_at')::timestamptz, v_op->>'owner', (v_op->>'expires_at')::timestamptz,
              (v_op->>'daily_limit_nano')::bigint, (v_op->>'estimated_cost_nano')::bigint);
            v_results := v_results || jsonb_build_object('placed', v_decision.placed, 'reason', v_decision.reason,
                                                         'remaining_nano', v_decision.remaining_nano);
          ELSE
            v_ns := gateway_record_receipt(
              v_op->>'id', v_op->>'request_id', v_op->>'account_id', v_op->>'key_id', v_op->>'key_prefix',
              (v_op->>'created_at')::timestamptz, v_op->>'status', v_op->>'endpoint', (v_op->>'stream')::boolean,
              v_op->>'requested_model', v_op->>'answering_model', v_op->'attempts', nullif(v_op->'usage', 'null'::jsonb),
              (v_op->>'usage_estimated')::boolean, nullif(v_op->'prices', 'null'::jsonb), (v_op->>'hold_nano')::bigint,
              (v_op->>'cost_nano')::bigint, (v_op->>'latency_ms')::double precision,
              (v_op->>'time_to_first_token_ms')::double precision, v_op->>'error_code',
              (v_op->>'touch_key')::boolean, v_op->'warnings', (v_op->>'created_ns')::bigint);
            v_results := v_results || jsonb_build_object('created_ns', v_ns::text);
          END IF;
        END LOOP;
        RETURN to_jsonb(v_results);
      END
      $$;
    `,
  },
  {
    version: 8,
    name: 'group commit charges a batch once per account, key day and month',
    sql: `
      -- The receipt alone: written unless its id is there already, its hold released, the key's
      -- last use moved; no charge. Returns the receipt's created_ns, whether this call wrote it,
      -- and the UTC day and month its cost counts against (its hold's, else its own).
      CREATE FUNCTION gateway_insert_receipt(
        p_id text, p_request_id text, p_account_id text, p_key_id text, p_key_prefix text,
        p_created_at timestamptz, p_status text, p_endpoint text, p_stream boolean,
        p_requested_model text, p_answering_model text, p_attempts jsonb, p_usage jsonb,
        p_usage_estimated boolean, p_prices jsonb, p_hold_nano bigint, p_cost_nano bigint,
        p_latency_ms double precision, p_time_to_first_token_ms double precision, p_error_code text,
        p_touch_key boolean, p_warnings jsonb, p_created_ns bigint
      ) RETURNS TABLE (created_ns bigint, inserted boolean, day text, month text)
      LANGUAGE plpgsql AS $$
      DECLARE
        v_ns bigint := p_created_ns;
        v_existing bigint;
        v_day text;
        v_month text;
      BEGIN
        SELECT r.created_ns INTO v_existing FROM receipts r WHERE r.id = p_id;
        IF FOUND THEN
          DELETE FROM holds WHERE id = p_id;
          RETURN QUERY SELECT v_existing, false, NULL::text, NULL::text;
          RETURN;
        END IF;
        LOOP
          -- Above every value taken from v_ns to the end of its millisecond, as committed when this statement starts.
          SELECT coalesce(max(r.created_ns) + 1, v_ns) INTO v_ns FROM receipts r
          WHERE r.account_id = p_account_id AND r.created_ns >= v_ns
            AND r.created_ns < v_ns - (v_ns % 1000000 + 1000000) % 1000000 + 1000000;
          INSERT INTO receipts (id, request_id, account_id, key_id, key_prefix, created_at, created_ns, status, endpoint, stream,
                                requested_model, answering_model, attempts, warnings, usage, usage_estimated, prices,
                                hold_nano, cost_nano, latency_ms, time_to_first_token_ms, error_code)
          VALUES (p_id, p_request_id, p_account_id, p_key_id, p_key_prefix, p_created_at, v_ns, p_status, p_endpoint, p_stream,
                  p_requested_model, p_answering_model, p_attempts, p_warnings, p_usage, p_usage_estimated, p_prices,
                  p_hold_nano, p_cost_nano, p_latency_ms, p_time_to_first_token_ms, p_error_code)
          ON CONFLICT DO NOTHING;
          EXIT WHEN FOUND;
          -- A free-of-charge copy of this settlement committed meanwhile: it stands.
          SELECT r.created_ns INTO v_existing FROM receipts r WHERE r.id = p_id;
          IF FOUND THEN
            DELETE FROM holds WHERE id = p_id;
            RETURN QUERY SELECT v_existing, false, NULL::text, NULL::text;
            RETURN;
          END IF;
          -- Taken by a settlement that committed while this one waited, as others waiting may find
          -- too: look again from a little past it, at random, so they do not all want the next one.
          v_ns := v_ns + 1 + floor(random() * 64)::bigint;
        END LOOP;
        DELETE FROM holds h WHERE h.id = p_id RETURNING h.day, h.month INTO v_day, v_month;
        -- Never move backwards: a long stream can finish after a later request's receipt.
        IF p_touch_key THEN
          UPDATE api_keys SET last_used_at = p_created_at
          WHERE id = p_key_id AND (last_used_at IS NULL OR last_used_at < p_created_at);
        END IF;
        -- Without its hold (recovered, or never placed) a cost counts on the receipt's UTC day.
        RETURN QUERY SELECT v_ns, true,
          coalesce(v_day, to_char(p_created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')),
          coalesce(v_month, to_char(p_created_at AT TIME ZONE 'UTC', 'YYYY-MM'));
      END
      $$;

      -- One settlement (as in migration 7): the receipt, then its charge to the balance, the
      -- key's day and the account's month. A charging one locks the account row before looking
      -- for an earlier copy of itself, so two copies take turns and the second charges nothing.
      CREATE OR REPLACE FUNCTION gateway_record_receipt(
        p_id text, p_request_id text, p_account_id text, p_key_id text, p_key_prefix text,
        p_created_at timestamptz, p_status text, p_endpoint text, p_stream boolean,
        p_requested_model text, p_answering_model text, p_attempts jsonb, p_usage jsonb,
        p_usage_estimated boolean, p_prices jsonb, p_hold_nano bigint, p_cost_nano bigint,
        p_latency_ms double precision, p_time_to_first_token_ms double precision, p_error_code text,
        p_touch_key boolean, p_warnings jsonb, p_created_ns bigint
      ) RETURNS bigint
      LANGUAGE plpgsql AS $$
      DECLARE
        v record;
      BEGIN
        IF p_cost_nano > 0 THEN
          PERFORM 1 FROM accounts WHERE id = p_account_id FOR NO KEY UPDATE;
        END IF;
        SELECT * INTO v FROM gateway_insert_receipt(
          p_id, p_request_id, p_account_id, p_key_id, p_key_prefix, p_created_at, p_status, p_endpoint, p_stream,
          p_requested_model, p_answering_model, p_attempts, p_usage, p_usage_estimated, p_prices, p_hold_nano, p_cost_nano,
          p_latency_ms, p_time_to_first_token_ms, p_error_code, p_touch_key, p_warnings, p_created_ns);
        IF v.inserted AND p_cost_nano > 0 THEN
          UPDATE accounts SET balance_nano = balance_nano - p_cost_nano WHERE id = p_account_id;
          INSERT INTO key_daily_spend AS s (key_id, day, account_id, charged_nano)
          VALUES (p_key_id, v.day, p_account_id, p_cost_nano)
          ON CONFLICT (key_id, day) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
          INSERT INTO account_monthly_spend AS s (account_id, month, charged_nano)
          VALUES (p_account_id, v.month, p_cost_nano)
          ON CONFLICT (account_id, month) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
        END IF;
        RETURN v.created_ns;
      END
      $$;

      -- A batch (postgres-group-commit.ts). Its operations were all in flight at once, so any
      -- order is one they could have had: settlements first, then holds. The settlements' costs
      -- are summed and charged once per account, key day and month (one row version each per
      -- batch, not one per request), and before any hold of the batch is checked: a hold never
      -- sees a released hold without its charge.
      CREATE OR REPLACE FUNCTION gateway_apply_batch(p_ops jsonb) RETURNS jsonb
      LANGUAGE plpgsql AS $$
      DECLARE
        v_op jsonb;
        v_index bigint;
        v_results jsonb[] := array_fill(NULL::jsonb, ARRAY[jsonb_array_length(p_ops)]);
        v_charges jsonb[] := '{}';
        v_receipt record;
        v_decision record;
      BEGIN
        PERFORM 1 FROM accounts
          WHERE id IN (SELECT DISTINCT o->>'account_id' FROM jsonb_array_elements(p_ops) AS o)
          ORDER BY id FOR NO KEY UPDATE;
        FOR v_op, v_index IN SELECT value, ordinality FROM jsonb_array_elements(p_ops) WITH ORDINALITY WHERE value->>'op' = 'receipt' LOOP
          SELECT * INTO v_receipt FROM gateway_insert_receipt(
            v_op->>'id', v_op->>'request_id', v_op->>'account_id', v_op->>'key_id', v_op->>'key_prefix',
            (v_op->>'created_at')::timestamptz, v_op->>'status', v_op->>'endpoint', (v_op->>'stream')::boolean,
            v_op->>'requested_model', v_op->>'answering_model', v_op->'attempts', nullif(v_op->'usage', 'null'::jsonb),
            (v_op->>'usage_estimated')::boolean, nullif(v_op->'prices', 'null'::jsonb), (v_op->>'hold_nano')::bigint,
            (v_op->>'cost_nano')::bigint, (v_op->>'latency_ms')::double precision,
            (v_op->>'time_to_first_token_ms')::double precision, v_op->>'error_code',
            (v_op->>'touch_key')::boolean, v_op->'warnings', (v_op->>'created_ns')::bigint);
          v_results[v_index] := jsonb_build_object('created_ns', v_receipt.created_ns::text);
          IF v_receipt.inserted AND (v_op->>'cost_nano')::bigint > 0 THEN
            v_charges := v_charges || jsonb_build_object('account_id', v_op->>'account_id', 'key_id', v_op->>'key_id',
              'day', v_receipt.day, 'month', v_receipt.month, 'cost', (v_op->>'cost_nano')::bigint);
          END IF;
        END LOOP;
        IF cardinality(v_charges) > 0 THEN
          UPDATE accounts AS a SET balance_nano = a.balance_nano - c.total
          FROM (SELECT x->>'account_id' AS id, sum((x->>'cost')::bigint)::bigint AS total FROM unnest(v_charges) AS x GROUP BY 1) AS c
          WHERE a.id = c.id;
          INSERT INTO key_daily_spend AS s (key_id, day, account_id, charged_nano)
          SELECT x->>'key_id', x->>'day', min(x->>'account_id'), sum((x->>'cost')::bigint)::bigint FROM unnest(v_charges) AS x GROUP BY 1, 2
          ON CONFLICT (key_id, day) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
          INSERT INTO account_monthly_spend AS s (account_id, month, charged_nano)
          SELECT x->>'account_id', x->>'month', sum((x->>'cost')::bigint)::bigint FROM unnest(v_charges) AS x GROUP BY 1, 2
          ON CONFLICT (account_id, month) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
        END IF;
        FOR v_op, v_index IN SELECT value, ordinality FROM jsonb_array_elements(p_ops) WITH ORDINALITY WHERE value->>'op' = 'hold' LOOP
          SELECT * INTO v_decision FROM gateway_place_hold(
            v_op->>'id', v_op->>'request_id', v_op->>'account_id', v_op->>'key_id', v_op->>'key_prefix',
            v_op->>'endpoint', (v_op->>'stream')::boolean, v_op->>'requested_model', (v_op->>'amount_nano')::bigint,
            v_op->>'day', v_op->>'month', (v_op->>'created_at')::timestamptz, v_op->>'owner', (v_op->>'expires_at')::timestamptz,
            (v_op->>'daily_limit_nano')::bigint, (v_op->>'estimated_cost_nano')::bigint);
          v_results[v_index] := jsonb_build_object('placed', v_decision.placed, 'reason', v_decision.reason,
                                                   'remaining_nano', v_decision.remaining_nano);
        END LOOP;
        RETURN to_jsonb(v_results);
      END
      $$;
    `,
  },
  {
    version: 9,
    name: 'group commit takes the account rows only for charges and holds',
    sql: `
      -- As in migration 8, but the receipts are written before the batch locks any account row:
      -- writing them needs no lock (two copies of one settlement meet on the receipts' primary
      -- key, and the second writes and charges nothing), so batches of several processes, or
      -- several batches of one, write their receipts side by side and take turns on an account
      -- row only for its summed charges and the batch's holds.
      CREATE OR REPLACE FUNCTION gateway_apply_batch(p_ops jsonb) RETURNS jsonb
      LANGUAGE plpgsql AS $$
      DECLARE
        v_op jsonb;
        v_index bigint;
        v_results jsonb[] := array_fill(NULL::jsonb, ARRAY[jsonb_array_length(p_ops)]);
        v_charges jsonb[] := '{}';
        v_receipt record;
        v_decision record;
      BEGIN
        FOR v_op, v_index IN SELECT value, ordinality FROM jsonb_array_elements(p_ops) WITH ORDINALITY WHERE value->>'op' = 'receipt' LOOP
          SELECT * INTO v_receipt FROM gateway_insert_receipt(
            v_op->>'id', v_op->>'request_id', v_op->>'account_id', v_op->>'key_id', v_op->>'key_prefix',
            (v_op->>'created_at')::timestamptz, v_op->>'status', v_op->>'endpoint', (v_op->>'stream')::boolean,
            v_op->>'requested_model', v_op->>'answering_model', v_op->'attempts', nullif(v_op->'usage', 'null'::jsonb),
            (v_op->>'usage_estimated')::boolean, nullif(v_op->'prices', 'null'::jsonb), (v_op->>'hold_nano')::bigint,
            (v_op->>'cost_nano')::bigint, (v_op->>'latency_ms')::double precision,
            (v_op->>'time_to_first_token_ms')::double precision, v_op->>'error_code',
            (v_op->>'touch_key')::boolean, v_op->'warnings', (v_op->>'created_ns')::bigint);
          v_results[v_index] := jsonb_build_object('created_ns', v_receipt.created_ns::text);
          IF v_receipt.inserted AND (v_op->>'cost_nano')::bigint > 0 THEN
            v_charges := v_charges || jsonb_build_object('account_id', v_op->>'account_id', 'key_id', v_op->>'key_id',
              'day', v_receipt.day, 'month', v_receipt.month, 'cost', (v_op->>'cost_nano')::bigint);
          END IF;
        END LOOP;
        -- From here on the batch's accounts are locked, once and in id order: no two batches deadlock on them.
        PERFORM 1 FROM accounts
          WHERE id IN (SELECT DISTINCT o->>'account_id' FROM jsonb_array_elements(p_ops) AS o)
          ORDER BY id FOR NO KEY UPDATE;
        IF cardinality(v_charges) > 0 THEN
          UPDATE accounts AS a SET balance_nano = a.balance_nano - c.total
          FROM (SELECT x->>'account_id' AS id, sum((x->>'cost')::bigint)::bigint AS total FROM unnest(v_charges) AS x GROUP BY 1) AS c
          WHERE a.id = c.id;
          INSERT INTO key_daily_spend AS s (key_id, day, account_id, charged_nano)
          SELECT x->>'key_id', x->>'day', min(x->>'account_id'), sum((x->>'cost')::bigint)::bigint FROM unnest(v_charges) AS x GROUP BY 1, 2
          ON CONFLICT (key_id, day) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
          INSERT INTO account_monthly_spend AS s (account_id, month, charged_nano)
          SELECT x->>'account_id', x->>'month', sum((x->>'cost')::bigint)::bigint FROM unnest(v_charges) AS x GROUP BY 1, 2
          ON CONFLICT (account_id, month) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
        END IF;
        FOR v_op, v_index IN SELECT value, ordinality FROM jsonb_array_elements(p_ops) WITH ORDINALITY WHERE value->>'op' = 'hold' LOOP
          SELECT * INTO v_decision FROM gateway_place_hold(
            v_op->>'id', v_op->>'request_id', v_op->>'account_id', v_op->>'key_id', v_op->>'key_prefix',
            v_op->>'endpoint', (v_op->>'stream')::boolean, v_op->>'requested_model', (v_op->>'amount_nano')::bigint,
            v_op->>'day', v_op->>'month', (v_op->>'created_at')::timestamptz, v_op->>'owner', (v_op->>'expires_at')::timestamptz,
            (v_op->>'daily_limit_nano')::bigint, (v_op->>'estimated_cost_nano')::bigint);
          v_results[v_index] := jsonb_build_object('placed', v_decision.placed, 'reason', v_decision.reason,
                                                   'remaining_nano', v_decision.remaining_nano);
        END LOOP;
        RETURN to_jsonb(v_results);
      END
      $$;
    `,
  },
  {
    version: 10,
    name: 'one lock order for settlements: receipts, then the account row',
    sql: `
      -- A settlement alone writes its receipt before it locks the account row, as a batch does
      -- (migration 9): every writer takes receipts' index entries before account rows, and no
      -- two wait for each other in a circle. Two copies of one settlement still charge once:
      -- the second meets the first on the receipts' primary key and writes nothing.
      CREATE OR REPLACE FUNCTION gateway_record_receipt(
        p_id text, p_request_id text, p_account_id text, p_key_id text, p_key_prefix text,
        p_created_at timestamptz, p_status text, p_endpoint text, p_stream boolean,
        p_requested_model text, p_answering_model text, p_attempts jsonb, p_usage jsonb,
        p_usage_estimated boolean, p_prices jsonb, p_hold_nano bigint, p_cost_nano bigint,
        p_latency_ms double precision, p_time_to_first_token_ms double precision, p_error_code text,
        p_touch_key boolean, p_warnings jsonb, p_created_ns bigint
      ) RETURNS bigint
      LANGUAGE plpgsql AS $$
      DECLARE
        v record;
      BEGIN
        SELECT * INTO v FROM gateway_insert_receipt(
          p_id, p_request_id, p_account_id, p_key_id, p_key_prefix, p_created_at, p_status, p_endpoint, p_stream,
          p_requested_model, p_answering_model, p_attempts, p_usage, p_usage_estimated, p_prices, p_hold_nano, p_cost_nano,
          p_latency_ms, p_time_to_first_token_ms, p_error_code, p_touch_key, p_warnings, p_created_ns);
        IF v.inserted AND p_cost_nano > 0 THEN
          UPDATE accounts SET balance_nano = balance_nano - p_cost_nano WHERE id = p_account_id;
          INSERT INTO key_daily_spend AS s (key_id, day, account_id, charged_nano)
          VALUES (p_key_id, v.day, p_account_id, p_cost_nano)
          ON CONFLICT (key_id, day) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
          INSERT INTO account_monthly_spend AS s (account_id, month, charged_nano)
          VALUES (p_account_id, v.month, p_cost_nano)
          ON CONFLICT (account_id, month) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
        END IF;
        RETURN v.created_ns;
      END
      $$;

      CREATE OR REPLACE FUNCTION gateway_apply_batch(p_ops jsonb) RETURNS jsonb
      LANGUAGE plpgsql AS $$
      DECLARE
        v_op jsonb;
        v_index bigint;
        v_results jsonb[] := array_fill(NULL::jsonb, ARRAY[jsonb_array_length(p_ops)]);
        v_charges jsonb[] := '{}';
        v_receipt record;
        v_decision record;
      BEGIN
        -- In created_ns order: two batches writing receipts of the same milliseconds take their index
        -- entries in the same order, so one waits for the other rather than each for the other.
        FOR v_op, v_index IN SELECT value, ordinality FROM jsonb_array_elements(p_ops) WITH ORDINALITY
                             WHERE value->>'op' = 'receipt' ORDER BY (value->>'created_ns')::bigint LOOP
          SELECT * INTO v_receipt FROM gateway_insert_receipt(
            v_op->>'id', v_op->>'request_id', v_op->>'account_id', v_op->>'key_id', v_op->>'key_prefix',
            (v_op->>'created_at')::timestamptz, v_op->>'status', v_op->>'endpoint', (v_op->>'stream')::boolean,
            v_op->>'requested_model', v_op->>'answering_model', v_op->'attempts', nullif(v_op->'usage', 'null'::jsonb),
            (v_op->>'usage_estimated')::boolean, nullif(v_op->'prices', 'null'::jsonb), (v_op->>'hold_nano')::bigint,
            (v_op->>'cost_nano')::bigint, (v_op->>'latency_ms')::double precision,
            (v_op->>'time_to_first_token_ms')::double precision, v_op->>'error_code',
            (v_op->>'touch_key')::boolean, v_op->'warnings', (v_op->>'created_ns')::bigint);
          v_results[v_index] := jsonb_build_object('created_ns', v_receipt.created_ns::text);
          IF v_receipt.inserted AND (v_op->>'cost_nano')::bigint > 0 THEN
            v_charges := v_charges || jsonb_build_object('account_id', v_op->>'account_id', 'key_id', v_op->>'key_id',
              'day', v_receipt.day, 'month', v_receipt.month, 'cost', (v_op->>'cost_nano')::bigint);
          END IF;
        END LOOP;
        -- From here on the batch's accounts are locked, once and in id order: no two batches deadlock on them.
        PERFORM 1 FROM accounts
          WHERE id IN (SELECT DISTINCT o->>'account_id' FROM jsonb_array_elements(p_ops) AS o)
          ORDER BY id FOR NO KEY UPDATE;
        IF cardinality(v_charges) > 0 THEN
          UPDATE accounts AS a SET balance_nano = a.balance_nano - c.total
          FROM (SELECT x->>'account_id' AS id, sum((x->>'cost')::bigint)::bigint AS total FROM unnest(v_charges) AS x GROUP BY 1) AS c
          WHERE a.id = c.id;
          INSERT INTO key_daily_spend AS s (key_id, day, account_id, charged_nano)
          SELECT x->>'key_id', x->>'day', min(x->>'account_id'), sum((x->>'cost')::bigint)::bigint FROM unnest(v_charges) AS x GROUP BY 1, 2
          ON CONFLICT (key_id, day) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
          INSERT INTO account_monthly_spend AS s (account_id, month, charged_nano)
          SELECT x->>'account_id', x->>'month', sum((x->>'cost')::bigint)::bigint FROM unnest(v_charges) AS x GROUP BY 1, 2
          ON CONFLICT (account_id, month) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
        END IF;
        FOR v_op, v_index IN SELECT value, ordinality FROM jsonb_array_elements(p_ops) WITH ORDINALITY WHERE value->>'op' = 'hold' LOOP
          SELECT * INTO v_decision FROM gateway_place_hold(
            v_op->>'id', v_op->>'request_id', v_op->>'account_id', v_op->>'key_id', v_op->>'key_prefix',
            v_op->>'endpoint', (v_op->>'stream')::boolean, v_op->>'requested_model', (v_op->>'amount_nano')::bigint,
            v_op->>'day', v_op->>'month', (v_op->>'created_at')::timestamptz, v_op->>'owner', (v_op->>'expires_at')::timestamptz,
            (v_op->>'daily_limit_nano')::bigint, (v_op->>'estimated_cost_nano')::bigint);
          v_results[v_index] := jsonb_build_object('placed', v_decision.placed, 'reason', v_decision.reason,
                                                   'remaining_nano', v_decision.remaining_nano);
        END LOOP;
        RETURN to_jsonb(v_results);
      END
      $$;
    `,
  },
  {
    version: 11,
    name: "a batch sums an account's holds once, not once per hold",
    sql: `
      -- As in migration 10, but the holds of a batch on an account without a monthly budget,
      -- from keys without a daily limit, are checked against one running figure: the balance
      -- minus the account's holds, summed once after the batch's charges, less each hold placed.
      -- It is what gateway_place_hold would find for each (the batch holds the account row), at
      -- one sum instead of one per hold, which shortens the time the row is held. Any other hold
      -- goes through gateway_place_hold as before.
      CREATE OR REPLACE FUNCTION gateway_apply_batch(p_ops jsonb) RETURNS jsonb
      LANGUAGE plpgsql AS $$
      DECLARE
        v_op jsonb;
        v_index bigint;
        v_results jsonb[] := array_fill(NULL::jsonb, ARRAY[jsonb_array_length(p_ops)]);
        v_charges jsonb[] := '{}';
        v_receipt record;
        v_decision record;
        v_available jsonb := '{}';
        v_account text;
        v_balance bigint;
        v_budget bigint;
        v_left bigint;
        v_amount bigint;
        v_existed boolean;
      BEGIN
        -- In created_ns order: two batches writing receipts of the same milliseconds take their index
        -- entries in the same order, so one waits for the other rather than each for the other.
        FOR v_op, v_index IN SELECT value, ordinality FROM jsonb_array_elements(p_ops) WITH ORDINALITY
                             WHERE value->>'op' = 'receipt' ORDER BY (value->>'created_ns')::bigint LOOP
          SELECT * INTO v_receipt FROM gateway_insert_receipt(
            v_op->>'id', v_op->>'request_id', v_op->>'account_id', v_op->>'key_id', v_op->>'key_prefix',
            (v_op->>'created_at')::timestamptz, v_op->>'status', v_op->>'endpoint', (v_op->>'stream')::boolean,
            v_op->>'requested_model', v_op->>'answering_model', v_op->'attempts', nullif(v_op->'usage', 'null'::jsonb),
            (v_op->>'usage_estimated')::boolean, nullif(v_op->'prices', 'null'::jsonb), (v_op->>'hold_nano')::bigint,
            (v_op->>'cost_nano')::bigint, (v_op->>'latency_ms')::double precision,
            (v_op->>'time_to_first_token_ms')::double precision, v_op->>'error_code',
            (v_op->>'touch_key')::boolean, v_op->'warnings', (v_op->>'created_ns')::bigint);
          v_results[v_index] := jsonb_build_object('created_ns', v_receipt.created_ns::text);
          IF v_receipt.inserted AND (v_op->>'cost_nano')::bigint > 0 THEN
            v_charges := v_charges || jsonb_build_object('account_id', v_op->>'account_id', 'key_id', v_op->>'key_id',
              'day', v_receipt.day, 'month', v_receipt.month, 'cost', (v_op->>'cost_nano')::bigint);
          END IF;
        END LOOP;
        -- From here on the batch's accounts are locked, once and in id order: no two batches deadlock on them.
        PERFORM 1 FROM accounts
          WHERE id IN (SELECT DISTINCT o->>'account_id' FROM jsonb_array_elements(p_ops) AS o)
          ORDER BY id FOR NO KEY UPDATE;
        IF cardinality(v_charges) > 0 THEN
          UPDATE accounts AS a SET balance_nano = a.balance_nano - c.total
          FROM (SELECT x->>'account_id' AS id, sum((x->>'cost')::bigint)::bigint AS total FROM unnest(v_charges) AS x GROUP BY 1) AS c
          WHERE a.id = c.id;
          INSERT INTO key_daily_spend AS s (key_id, day, account_id, charged_nano)
          SELECT x->>'key_id', x->>'day', min(x->>'account_id'), sum((x->>'cost')::bigint)::bigint FROM unnest(v_charges) AS x GROUP BY 1, 2
          ON CONFLICT (key_id, day) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
          INSERT INTO account_monthly_spend AS s (account_id, month, charged_nano)
          SELECT x->>'account_id', x->>'month', sum((x->>'cost')::bigint)::bigint FROM unnest(v_charges) AS x GROUP BY 1, 2
          ON CONFLICT (account_id, month) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
        END IF;
        FOR v_op, v_index IN SELECT value, ordinality FROM jsonb_array_elements(p_ops) WITH ORDINALITY WHERE value->>'op' = 'hold' LOOP
          v_account := v_op->>'account_id';
          IF NOT v_available ? v_account THEN
            -- Once per account and batch, after its charges: the balance minus its holds; null
            -- when a monthly budget is set (then each hold is checked by gateway_place_hold).
            SELECT a.balance_nano, a.monthly_budget_nano INTO v_balance, v_budget FROM accounts a WHERE a.id = v_account;
            v_available := v_available || jsonb_build_object(v_account, CASE WHEN v_budget IS NULL THEN
              coalesce(v_balance, 0) - (SELECT coalesce(sum(h.amount_nano), 0) FROM holds h WHERE h.account_id = v_account) END);
          END IF;
          v_left := (v_available->>v_account)::bigint;
          v_amount := (v_op->>'amount_nano')::bigint;
          v_existed := EXISTS (SELECT 1 FROM holds h WHERE h.id = v_op->>'id');
          IF v_left IS NULL OR (v_op->>'daily_limit_nano') IS NOT NULL OR v_existed THEN
            SELECT * INTO v_decision FROM gateway_place_hold(
              v_op->>'id', v_op->>'request_id', v_account, v_op->>'key_id', v_op->>'key_prefix',
              v_op->>'endpoint', (v_op->>'stream')::boolean, v_op->>'requested_model', v_amount,
              v_op->>'day', v_op->>'month', (v_op->>'created_at')::timestamptz, v_op->>'owner', (v_op->>'expires_at')::timestamptz,
              (v_op->>'daily_limit_nano')::bigint, (v_op->>'estimated_cost_nano')::bigint);
            v_results[v_index] := jsonb_build_object('placed', v_decision.placed, 'reason', v_decision.reason,
                                                     'remaining_nano', v_decision.remaining_nano);
            -- A hold it inserted counts against the running figure (one already there was summed).
            IF v_left IS NOT NULL AND v_decision.placed AND NOT v_existed THEN
              v_available := v_available || jsonb_build_object(v_account, v_left - v_amount);
            END IF;
          ELSIF v_amount > v_left THEN
            v_results[v_index] := jsonb_build_object('placed', false, 'reason', 'insufficient_balance', 'remaining_nano', v_left);
          ELSE
            INSERT INTO holds (id, request_id, account_id, key_id, key_prefix, endpoint, stream, requested_model,
                               amount_nano, day, month, created_at, owner, expires_at, estimated_cost_nano)
            VALUES (v_op->>'id', v_op->>'request_id', v_account, v_op->>'key_id', v_op->>'key_prefix', v_op->>'endpoint',
                    (v_op->>'stream')::boolean, v_op->>'requested_model', v_amount, v_op->>'day', v_op->>'month',
                    (v_op->>'created_at')::timestamptz, v_op->>'owner', (v_op->>'expires_at')::timestamptz,
                    coalesce((v_op->>'estimated_cost_nano')::bigint, 0));
            v_available := v_available || jsonb_build_object(v_account, v_left - v_amount);
            v_results[v_index] := jsonb_build_object('placed', true, 'reason', NULL, 'remaining_nano', NULL);
          END IF;
        END LOOP;
        RETURN to_jsonb(v_results);
      END
      $$;
    `,
  },
  {
    version: 12,
    name: 'balance leases: a process reserves a slice of the balance and places holds in it without the account row',
    sql: `
      -- A slice of an account's balance (and of its month's budget) reserved by one process, which
      -- places request holds inside it without locking the account row (postgres-balance-leases.ts).
      -- Three running totals, never decreasing: granted (every reservation the lease was given,
      -- including what was since charged), charged (the costs of the receipts settled through it)
      -- and folded (the part of charged already taken off accounts.balance_nano and added to the
      -- month's spend). Hence, for its account:
      --   balance  = accounts.balance_nano - sum(charged - folded)
      --   reserved = sum(greatest(granted - charged, 0)), taken from what other holds may use;
      -- the holds placed in it (lease_id set) are inside that reservation and not counted again.
      CREATE TABLE balance_leases (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts (id),
        owner text NOT NULL,
        month text NOT NULL,
        granted_nano bigint NOT NULL CHECK (granted_nano >= 0),
        charged_nano bigint NOT NULL DEFAULT 0 CHECK (charged_nano >= 0),
        folded_nano bigint NOT NULL DEFAULT 0 CHECK (folded_nano >= 0 AND folded_nano <= charged_nano),
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL
      );
      CREATE INDEX balance_leases_by_account ON balance_leases (account_id);
      ALTER TABLE holds ADD COLUMN lease_id text;

      -- What an account's leases take: from the balance (charges not yet folded) and from what
      -- holds may use (reservations not yet charged), in all and for one month.
      CREATE FUNCTION gateway_lease_totals(p_account_id text, p_month text,
        OUT unfolded_nano bigint, OUT reserved_nano bigint, OUT month_unfolded_nano bigint, OUT month_reserved_nano bigint)
      LANGUAGE sql AS $$
        SELECT coalesce(sum(l.charged_nano - l.folded_nano), 0)::bigint,
               coalesce(sum(greatest(l.granted_nano - l.charged_nano, 0)), 0)::bigint,
               coalesce(sum(l.charged_nano - l.folded_nano) FILTER (WHERE l.month = p_month), 0)::bigint,
               coalesce(sum(greatest(l.granted_nano - l.charged_nano, 0)) FILTER (WHERE l.month = p_month), 0)::bigint
        FROM balance_leases l WHERE l.account_id = p_account_id
      $$;

      -- What a new hold may use, with the account row locked by the caller: the balance less the
      -- holds outside leases and what the leases take; the month's figure likewise.
      CREATE FUNCTION gateway_available(p_account_id text, p_month text, OUT available_nano bigint, OUT month_used_nano bigint)
      LANGUAGE plpgsql AS $$
      DECLARE
        v_leases record;
        v_balance bigint;
      BEGIN
        SELECT * INTO v_leases FROM gateway_lease_totals(p_account_id, p_month);
        SELECT a.balance_nano INTO v_balance FROM accounts a WHERE a.id = p_account_id;
        available_nano := coalesce(v_balance, 0) - v_leases.unfolded_nano - v_leases.reserved_nano
          - (SELECT coalesce(sum(h.amount_nano), 0) FROM holds h WHERE h.account_id = p_account_id AND h.lease_id IS NULL);
        month_used_nano := coalesce((SELECT s.charged_nano FROM account_monthly_spend s WHERE s.account_id = p_account_id AND s.month = p_month), 0)
          + v_leases.month_unfolded_nano + v_leases.month_reserved_nano
          + (SELECT coalesce(sum(h.amount_nano), 0) FROM holds h WHERE h.account_id = p_account_id AND h.month = p_month AND h.lease_id IS NULL);
      END
      $$;

      -- As in migration 7, against what the leases leave.
      CREATE OR REPLACE FUNCTION gateway_place_hold(
        p_id text, p_request_id text, p_account_id text, p_key_id text, p_key_prefix text,
        p_endpoint text, p_stream boolean, p_requested_model text, p_amount_nano bigint,
        p_day text, p_month text, p_created_at timestamptz, p_owner text, p_expires_at timestamptz,
        p_daily_limit_nano bigint, p_estimated_cost_nano bigint DEFAULT 0
      ) RETURNS TABLE (placed boolean, reason text, remaining_nano bigint)
      LANGUAGE plpgsql AS $$
      DECLARE
        v_budget bigint;
        v_room record;
        v_used bigint;
      BEGIN
        SELECT a.monthly_budget_nano INTO v_budget FROM accounts a WHERE a.id = p_account_id FOR NO KEY UPDATE;
        IF EXISTS (SELECT 1 FROM holds h WHERE h.id = p_id) THEN
          RETURN QUERY SELECT true, NULL::text, NULL::bigint;
          RETURN;
        END IF;
        SELECT * INTO v_room FROM gateway_available(p_account_id, p_month);
        IF p_amount_nano > v_room.available_nano THEN
          RETURN QUERY SELECT false, 'insufficient_balance'::text, v_room.available_nano;
          RETURN;
        END IF;
        IF p_daily_limit_nano IS NOT NULL THEN
          v_used := coalesce((SELECT s.charged_nano FROM key_daily_spend s WHERE s.key_id = p_key_id AND s.day = p_day), 0)
            + (SELECT coalesce(sum(h.amount_nano), 0) FROM holds h
                WHERE h.account_id = p_account_id AND h.key_id = p_key_id AND h.day = p_day);
          IF v_used + p_amount_nano > p_daily_limit_nano THEN
            RETURN QUERY SELECT false, 'daily_limit'::text, p_daily_limit_nano - v_used;
            RETURN;
          END IF;
        END IF;
        IF v_budget IS NOT NULL AND v_room.month_used_nano + p_amount_nano > v_budget THEN
          RETURN QUERY SELECT false, 'monthly_budget'::text, v_budget - v_room.month_used_nano;
          RETURN;
        END IF;
        INSERT INTO holds (id, request_id, account_id, key_id, key_prefix, endpoint, stream, requested_model,
                           amount_nano, day, month, created_at, owner, expires_at, estimated_cost_nano)
        VALUES (p_id, p_request_id, p_account_id, p_key_id, p_key_prefix, p_endpoint, p_stream, p_requested_model,
                p_amount_nano, p_day, p_month, p_created_at, p_owner, p_expires_at, coalesce(p_estimated_cost_nano, 0));
        RETURN QUERY SELECT true, NULL::text, NULL::bigint;
      END
      $$;

      -- Folds a lease's charges into its account (balance and month's spend); the caller holds
      -- the lease row, then the account row (every writer takes leases before accounts).
      CREATE FUNCTION gateway_fold_lease(p_lease balance_leases) RETURNS void
      LANGUAGE plpgsql AS $$
      DECLARE
        v_fold bigint := p_lease.charged_nano - p_lease.folded_nano;
      BEGIN
        IF v_fold > 0 THEN
          UPDATE accounts SET balance_nano = balance_nano - v_fold WHERE id = p_lease.account_id;
          INSERT INTO account_monthly_spend AS s (account_id, month, charged_nano) VALUES (p_lease.account_id, p_lease.month, v_fold)
          ON CONFLICT (account_id, month) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
          UPDATE balance_leases SET folded_nano = charged_nano WHERE id = p_lease.id;
        END IF;
      END
      $$;

      -- Take, top up, renew or shrink a lease (p_lease_id null: a new one, id p_new_id): fold its
      -- charges, then make its reservation p_target when the account can spare 16 times that
      -- (balance and budget, besides this lease), else keep at most p_keep (what its live holds
      -- use) of what it had. Returns the lease (null when none was taken, or it is gone: recovered)
      -- with its granted and charged totals.
      CREATE FUNCTION gateway_renew_lease(
        p_lease_id text, p_new_id text, p_account_id text, p_owner text, p_month text,
        p_target bigint, p_keep bigint, p_expires_at timestamptz, p_now timestamptz
      ) RETURNS TABLE (lease_id text, granted_nano bigint, charged_nano bigint)
      LANGUAGE plpgsql AS $$
      DECLARE
        v_lease balance_leases;
        v_budget bigint;
        v_room record;
        v_own bigint := 0;
        v_reserve bigint;
      BEGIN
        IF p_lease_id IS NOT NULL THEN
          SELECT * INTO v_lease FROM balance_leases l WHERE l.id = p_lease_id FOR UPDATE;
          IF NOT FOUND THEN
            RETURN QUERY SELECT NULL::text, 0::bigint, 0::bigint;
            RETURN;
          END IF;
        END IF;
        SELECT a.monthly_budget_nano INTO v_budget FROM accounts a WHERE a.id = p_account_id FOR NO KEY UPDATE;
        IF p_lease_id IS NOT NULL THEN
          PERFORM gateway_fold_lease(v_lease);
          v_own := greatest(v_lease.granted_nano - v_lease.charged_nano, 0);
        END IF;
        SELECT * INTO v_room FROM gateway_available(p_account_id, p_month);
        IF p_target > 0 AND v_room.available_nano + v_own >= 16 * p_target
           AND (v_budget IS NULL OR v_budget - v_room.month_used_nano + v_own >= 16 * p_target) THEN
          v_reserve := p_target;
        ELSE
          v_reserve := least(v_own, greatest(p_keep, 0));
        END IF;
        IF p_lease_id IS NULL THEN
          IF v_reserve = 0 THEN
            RETURN QUERY SELECT NULL::text, 0::bigint, 0::bigint;
            RETURN;
          END IF;
          INSERT INTO balance_leases (id, account_id, owner, month, granted_nano, expires_at, created_at)
          VALUES (p_new_id, p_account_id, p_owner, p_month, v_reserve, p_expires_at, p_now);
          RETURN QUERY SELECT p_new_id, v_reserve, 0::bigint;
          RETURN;
        END IF;
        IF v_reserve = 0 AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.lease_id = p_lease_id) THEN
          -- Nothing left to keep: handed back.
          DELETE FROM balance_leases WHERE id = p_lease_id;
          RETURN QUERY SELECT NULL::text, 0::bigint, 0::bigint;
          RETURN;
        END IF;
        UPDATE balance_leases l SET granted_nano = l.charged_nano + v_reserve, expires_at = greatest(l.expires_at, p_expires_at)
          WHERE l.id = p_lease_id;
        RETURN QUERY SELECT p_lease_id, v_lease.charged_nano + v_reserve, v_lease.charged_nano;
      END
      $$;

      -- A lease whose owner is gone (expired, or the owner known dead), re-checked under its row
      -- lock: its charges folded, its holds left as ordinary holds (counted on their own from now
      -- on, and recovered as such), the lease deleted. False when it is not such a lease (any more).
      CREATE FUNCTION gateway_release_lease(p_lease_id text, p_now timestamptz, p_dead_owners text[]) RETURNS boolean
      LANGUAGE plpgsql AS $$
      DECLARE
        v_lease balance_leases;
      BEGIN
        SELECT * INTO v_lease FROM balance_leases l
          WHERE l.id = p_lease_id AND (l.expires_at < p_now OR l.owner = ANY(p_dead_owners)) FOR UPDATE;
        IF NOT FOUND THEN
          RETURN false;
        END IF;
        PERFORM 1 FROM accounts WHERE id = v_lease.account_id FOR NO KEY UPDATE;
        PERFORM gateway_fold_lease(v_lease);
        UPDATE holds SET lease_id = NULL WHERE lease_id = p_lease_id;
        DELETE FROM balance_leases WHERE id = p_lease_id;
        RETURN true;
      END
      $$;

      -- As in migration 11, plus leases:
      -- - op 'lease_hold': a hold inside the process's lease (it checked its room in memory), inserted
      --   with its lease_id and without locking the account row (a hold whose id is there: placed);
      -- - a receipt with a lease_id adds its cost to that lease's charged total (the lease row is
      --   the process's own: no other process waits for it), unless the lease is gone (recovered),
      --   then it is charged to the account as any other.
      -- Account rows are locked only for the charges and holds outside leases. Lock order, as every
      -- other writer: receipts' index entries, lease rows, account rows (in id order), key days.
      CREATE OR REPLACE FUNCTION gateway_apply_batch(p_ops jsonb) RETURNS jsonb
      LANGUAGE plpgsql AS $$
      DECLARE
        v_op jsonb;
        v_index bigint;
        v_results jsonb[] := array_fill(NULL::jsonb, ARRAY[jsonb_array_length(p_ops)]);
        v_charges jsonb[] := '{}';
        v_leased text[];
        v_unleased jsonb[] := '{}';
        v_receipt record;
        v_decision record;
        v_available jsonb := '{}';
        v_account text;
        v_budget bigint;
        v_left bigint;
        v_amount bigint;
        v_existed boolean;
      BEGIN
        FOR v_op, v_index IN SELECT value, ordinality FROM jsonb_array_elements(p_ops) WITH ORDINALITY
                             WHERE value->>'op' = 'receipt' ORDER BY (value->>'created_ns')::bigint LOOP
          SELECT * INTO v_receipt FROM gateway_insert_receipt(
            v_op->>'id', v_op->>'request_id', v_op->>'account_id', v_op->>'key_id', v_op->>'key_prefix',
            (v_op->>'created_at')::timestamptz, v_op->>'status', v_op->>'endpoint', (v_op->>'stream')::boolean,
            v_op->>'requested_model', v_op->>'answering_model', v_op->'attempts', nullif(v_op->'usage', 'null'::jsonb),
            (v_op->>'usage_estimated')::boolean, nullif(v_op->'prices', 'null'::jsonb), (v_op->>'hold_nano')::bigint,
            (v_op->>'cost_nano')::bigint, (v_op->>'latency_ms')::double precision,
            (v_op->>'time_to_first_token_ms')::double precision, v_op->>'error_code',
            (v_op->>'touch_key')::boolean, v_op->'warnings', (v_op->>'created_ns')::bigint);
          v_results[v_index] := jsonb_build_object('created_ns', v_receipt.created_ns::text);
          IF v_receipt.inserted AND (v_op->>'cost_nano')::bigint > 0 THEN
            v_charges := v_charges || jsonb_build_object('account_id', v_op->>'account_id', 'key_id', v_op->>'key_id',
              'day', v_receipt.day, 'month', v_receipt.month, 'cost', (v_op->>'cost_nano')::bigint, 'lease_id', v_op->>'lease_id');
          END IF;
        END LOOP;
        IF cardinality(v_charges) > 0 THEN
          WITH charged AS (
            UPDATE balance_leases AS l SET charged_nano = l.charged_nano + c.total
            FROM (SELECT x->>'lease_id' AS id, sum((x->>'cost')::bigint)::bigint AS total FROM unnest(v_charges) AS x
                  WHERE x->>'lease_id' IS NOT NULL GROUP BY 1 ORDER BY 1) AS c
            WHERE l.id = c.id RETURNING l.id)
          SELECT coalesce(array_agg(id), '{}') INTO v_leased FROM charged;
          -- What no lease took is the account's.
          SELECT coalesce(array_agg(x), '{}') INTO v_unleased FROM unnest(v_charges) AS x
            WHERE x->>'lease_id' IS NULL OR NOT (x->>'lease_id' = ANY(v_leased));
        END IF;
        PERFORM 1 FROM accounts
          WHERE id IN (SELECT x->>'account_id' FROM unnest(v_unleased) AS x
                       UNION SELECT o->>'account_id' FROM jsonb_array_elements(p_ops) AS o WHERE o->>'op' = 'hold')
          ORDER BY id FOR NO KEY UPDATE;
        IF cardinality(v_unleased) > 0 THEN
          UPDATE accounts AS a SET balance_nano = a.balance_nano - c.total
          FROM (SELECT x->>'account_id' AS id, sum((x->>'cost')::bigint)::bigint AS total FROM unnest(v_unleased) AS x GROUP BY 1) AS c
          WHERE a.id = c.id;
          INSERT INTO account_monthly_spend AS s (account_id, month, charged_nano)
          SELECT x->>'account_id', x->>'month', sum((x->>'cost')::bigint)::bigint FROM unnest(v_unleased) AS x GROUP BY 1, 2
          ON CONFLICT (account_id, month) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
        END IF;
        IF cardinality(v_charges) > 0 THEN
          INSERT INTO key_daily_spend AS s (key_id, day, account_id, charged_nano)
          SELECT x->>'key_id', x->>'day', min(x->>'account_id'), sum((x->>'cost')::bigint)::bigint FROM unnest(v_charges) AS x
          GROUP BY 1, 2 ORDER BY 1, 2
          ON CONFLICT (key_id, day) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
        END IF;
        FOR v_op, v_index IN SELECT value, ordinality FROM jsonb_array_elements(p_ops) WITH ORDINALITY WHERE value->>'op' = 'lease_hold' LOOP
          INSERT INTO holds (id, request_id, account_id, key_id, key_prefix, endpoint, stream, requested_model,
                             amount_nano, day, month, created_at, owner, expires_at, estimated_cost_nano, lease_id)
          VALUES (v_op->>'id', v_op->>'request_id', v_op->>'account_id', v_op->>'key_id', v_op->>'key_prefix', v_op->>'endpoint',
                  (v_op->>'stream')::boolean, v_op->>'requested_model', (v_op->>'amount_nano')::bigint, v_op->>'day', v_op->>'month',
                  (v_op->>'created_at')::timestamptz, v_op->>'owner', (v_op->>'expires_at')::timestamptz,
                  coalesce((v_op->>'estimated_cost_nano')::bigint, 0), v_op->>'lease_id')
          ON CONFLICT (id) DO NOTHING;
          v_results[v_index] := jsonb_build_object('placed', true, 'reason', NULL, 'remaining_nano', NULL);
        END LOOP;
        FOR v_op, v_index IN SELECT value, ordinality FROM jsonb_array_elements(p_ops) WITH ORDINALITY WHERE value->>'op' = 'hold' LOOP
          v_account := v_op->>'account_id';
          IF NOT v_available ? v_account THEN
            -- Once per account and batch, after its charges; null when a monthly budget is set
            -- (then each hold is checked by gateway_place_hold).
            SELECT a.monthly_budget_nano INTO v_budget FROM accounts a WHERE a.id = v_account;
            v_available := v_available || jsonb_build_object(v_account, CASE WHEN v_budget IS NULL THEN
              (SELECT available_nano FROM gateway_available(v_account, v_op->>'month')) END);
          END IF;
          v_left := (v_available->>v_account)::bigint;
          v_amount := (v_op->>'amount_nano')::bigint;
          v_existed := EXISTS (SELECT 1 FROM holds h WHERE h.id = v_op->>'id');
          IF v_left IS NULL OR (v_op->>'daily_limit_nano') IS NOT NULL OR v_existed THEN
            SELECT * INTO v_decision FROM gateway_place_hold(
              v_op->>'id', v_op->>'request_id', v_account, v_op->>'key_id', v_op->>'key_prefix',
              v_op->>'endpoint', (v_op->>'stream')::boolean, v_op->>'requested_model', v_amount,
              v_op->>'day', v_op->>'month', (v_op->>'created_at')::timestamptz, v_op->>'owner', (v_op->>'expires_at')::timestamptz,
              (v_op->>'daily_limit_nano')::bigint, (v_op->>'estimated_cost_nano')::bigint);
            v_results[v_index] := jsonb_build_object('placed', v_decision.placed, 'reason', v_decision.reason,
                                                     'remaining_nano', v_decision.remaining_nano);
            IF v_left IS NOT NULL AND v_decision.placed AND NOT v_existed THEN
              v_available := v_available || jsonb_build_object(v_account, v_left - v_amount);
            END IF;
          ELSIF v_amount > v_left THEN
            v_results[v_index] := jsonb_build_object('placed', false, 'reason', 'insufficient_balance', 'remaining_nano', v_left);
          ELSE
            INSERT INTO holds (id, request_id, account_id, key_id, key_prefix, endpoint, stream, requested_model,
                               amount_nano, day, month, created_at, owner, expires_at, estimated_cost_nano)
            VALUES (v_op->>'id', v_op->>'request_id', v_account, v_op->>'key_id', v_op->>'key_prefix', v_op->>'endpoint',
                    (v_op->>'stream')::boolean, v_op->>'requested_model', v_amount, v_op->>'day', v_op->>'month',
                    (v_op->>'created_at')::timestamptz, v_op->>'owner', (v_op->>'expires_at')::timestamptz,
                    coalesce((v_op->>'estimated_cost_nano')::bigint, 0));
            v_available := v_available || jsonb_build_object(v_account, v_left - v_amount);
            v_results[v_index] := jsonb_build_object('placed', true, 'reason', NULL, 'remaining_nano', NULL);
          END IF;
        END LOOP;
        RETURN to_jsonb(v_results);
      END
      $$;
    `,
  },
  {
    version: 13,
    name: "a fix run's hold carries the estimated cost its recovery charges",
    sql: `
      -- As in migration 3, plus the estimate a recovered run is charged (orphan-receipt.ts).
      DROP FUNCTION gateway_start_fix_run(text, text, text, text, text, text, text, bigint, text, timestamptz, timestamptz, json, boolean,
        text, text, text, boolean, text, bigint, text, text, timestamptz, text, timestamptz, bigint);
      CREATE FUNCTION gateway_start_fix_run(
        p_run_id text, p_quote_id text, p_account_id text, p_key_id text, p_receipt_id text,
        p_agent text, p_tier text, p_max_cost_nano bigint, p_status text, p_created_at timestamptz,
        p_finished_at timestamptz, p_result json, p_cancel_requested boolean,
        p_request_id text, p_key_prefix text, p_endpoint text, p_stream boolean, p_requested_model text,
        p_amount_nano bigint, p_day text, p_month text, p_hold_created_at timestamptz, p_owner text,
        p_expires_at timestamptz, p_daily_limit_nano bigint, p_estimated_cost_nano bigint
      ) RETURNS TABLE (started boolean, reason text, remaining_nano bigint, existing_run_id text)
      LANGUAGE plpgsql AS $$
      DECLARE
        v_inserted text;
        v_decision record;
      BEGIN
        INSERT INTO fix_runs (id, quote_id, account_id, key_id, receipt_id, agent, tier, max_cost_nano, status,
                              created_at, finished_at, result, cancel_requested)
        VALUES (p_run_id, p_quote_id, p_account_id, p_key_id, p_receipt_id, p_agent, p_tier, p_max_cost_nano, p_status,
                p_created_at, p_finished_at, p_result, p_cancel_requested)
        ON CONFLICT (quote_id) DO NOTHING
        RETURNING id INTO v_inserted;
        IF v_inserted IS NULL THEN
          RETURN QUERY SELECT false, NULL::text, NULL::bigint, r.id FROM fix_runs r WHERE r.quote_id = p_quote_id;
          RETURN;
        END IF;
        SELECT * INTO v_decision FROM gateway_place_hold(
          p_receipt_id, p_request_id, p_account_id, p_key_id, p_key_prefix, p_endpoint, p_stream, p_requested_model,
          p_amount_nano, p_day, p_month, p_hold_created_at, p_owner, p_expires_at, p_daily_limit_nano, p_estimated_cost_nano);
        IF NOT v_decision.placed THEN
          DELETE FROM fix_runs WHERE id = p_run_id;
          RETURN QUERY SELECT false, v_decision.reason, v_decision.remaining_nano, NULL::text;
          RETURN;
        END IF;
        RETURN QUERY SELECT true, NULL::text, NULL::bigint, NULL::text;
      END
      $$;
    `,
  },
  {
    version: 14,
    name: 'a hold in a lease released meanwhile is checked as any other',
    sql: `
      -- As in migration 12, but the leases of a batch's lease holds are share-locked (before any
      -- account row, in the order every writer takes them) and a lease hold whose lease is gone
      -- goes through the checks of an ordinary hold: it is never inserted pointing at a lease
      -- that no longer reserves its room.
      CREATE OR REPLACE FUNCTION gateway_apply_batch(p_ops jsonb) RETURNS jsonb
      LANGUAGE plpgsql AS $$
      DECLARE
        v_op jsonb;
        v_index bigint;
        v_results jsonb[] := array_fill(NULL::jsonb, ARRAY[jsonb_array_length(p_ops)]);
        v_charges jsonb[] := '{}';
        v_leased text[];
        v_unleased jsonb[] := '{}';
        v_live_leases text[];
        v_receipt record;
        v_decision record;
        v_available jsonb := '{}';
        v_account text;
        v_budget bigint;
        v_left bigint;
        v_amount bigint;
        v_existed boolean;
      BEGIN
        FOR v_op, v_index IN SELECT value, ordinality FROM jsonb_array_elements(p_ops) WITH ORDINALITY
                             WHERE value->>'op' = 'receipt' ORDER BY (value->>'created_ns')::bigint LOOP
          SELECT * INTO v_receipt FROM gateway_insert_receipt(
            v_op->>'id', v_op->>'request_id', v_op->>'account_id', v_op->>'key_id', v_op->>'key_prefix',
            (v_op->>'created_at')::timestamptz, v_op->>'status', v_op->>'endpoint', (v_op->>'stream')::boolean,
            v_op->>'requested_model', v_op->>'answering_model', v_op->'attempts', nullif(v_op->'usage', 'null'::jsonb),
            (v_op->>'usage_estimated')::boolean, nullif(v_op->'prices', 'null'::jsonb), (v_op->>'hold_nano')::bigint,
            (v_op->>'cost_nano')::bigint, (v_op->>'latency_ms')::double precision,
            (v_op->>'time_to_first_token_ms')::double precision, v_op->>'error_code',
            (v_op->>'touch_key')::boolean, v_op->'warnings', (v_op->>'created_ns')::bigint);
          v_results[v_index] := jsonb_build_object('created_ns', v_receipt.created_ns::text);
          IF v_receipt.inserted AND (v_op->>'cost_nano')::bigint > 0 THEN
            v_charges := v_charges || jsonb_build_object('account_id', v_op->>'account_id', 'key_id', v_op->>'key_id',
              'day', v_receipt.day, 'month', v_receipt.month, 'cost', (v_op->>'cost_nano')::bigint, 'lease_id', v_op->>'lease_id');
          END IF;
        END LOOP;
        IF cardinality(v_charges) > 0 THEN
          WITH charged AS (
            UPDATE balance_leases AS l SET charged_nano = l.charged_nano + c.total
            FROM (SELECT x->>'lease_id' AS id, sum((x->>'cost')::bigint)::bigint AS total FROM unnest(v_charges) AS x
                  WHERE x->>'lease_id' IS NOT NULL GROUP BY 1 ORDER BY 1) AS c
            WHERE l.id = c.id RETURNING l.id)
          SELECT coalesce(array_agg(id), '{}') INTO v_leased FROM charged;
          -- What no lease took is the account's.
          SELECT coalesce(array_agg(x), '{}') INTO v_unleased FROM unnest(v_charges) AS x
            WHERE x->>'lease_id' IS NULL OR NOT (x->>'lease_id' = ANY(v_leased));
        END IF;
        -- The leases of the batch's lease holds, held until the commit so none is released meanwhile
        -- (gateway_release_lease detaches a lease's holds under its row lock: it then sees these).
        SELECT coalesce(array_agg(l.id), '{}') INTO v_live_leases FROM (
          SELECT l.id FROM balance_leases l
          WHERE l.id IN (SELECT o->>'lease_id' FROM jsonb_array_elements(p_ops) AS o WHERE o->>'op' = 'lease_hold')
          ORDER BY l.id FOR SHARE) AS l;
        PERFORM 1 FROM accounts
          WHERE id IN (SELECT x->>'account_id' FROM unnest(v_unleased) AS x
                       UNION SELECT o->>'account_id' FROM jsonb_array_elements(p_ops) AS o
                       WHERE o->>'op' = 'hold' OR (o->>'op' = 'lease_hold' AND NOT (o->>'lease_id' = ANY(v_live_leases))))
          ORDER BY id FOR NO KEY UPDATE;
        IF cardinality(v_unleased) > 0 THEN
          UPDATE accounts AS a SET balance_nano = a.balance_nano - c.total
          FROM (SELECT x->>'account_id' AS id, sum((x->>'cost')::bigint)::bigint AS total FROM unnest(v_unleased) AS x GROUP BY 1) AS c
          WHERE a.id = c.id;
          INSERT INTO account_monthly_spend AS s (account_id, month, charged_nano)
          SELECT x->>'account_id', x->>'month', sum((x->>'cost')::bigint)::bigint FROM unnest(v_unleased) AS x GROUP BY 1, 2
          ON CONFLICT (account_id, month) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
        END IF;
        IF cardinality(v_charges) > 0 THEN
          INSERT INTO key_daily_spend AS s (key_id, day, account_id, charged_nano)
          SELECT x->>'key_id', x->>'day', min(x->>'account_id'), sum((x->>'cost')::bigint)::bigint FROM unnest(v_charges) AS x
          GROUP BY 1, 2 ORDER BY 1, 2
          ON CONFLICT (key_id, day) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
        END IF;
        FOR v_op, v_index IN SELECT value, ordinality FROM jsonb_array_elements(p_ops) WITH ORDINALITY
                             WHERE value->>'op' = 'lease_hold' AND value->>'lease_id' = ANY(v_live_leases) LOOP
          INSERT INTO holds (id, request_id, account_id, key_id, key_prefix, endpoint, stream, requested_model,
                             amount_nano, day, month, created_at, owner, expires_at, estimated_cost_nano, lease_id)
          VALUES (v_op->>'id', v_op->>'request_id', v_op->>'account_id', v_op->>'key_id', v_op->>'key_prefix', v_op->>'endpoint',
                  (v_op->>'stream')::boolean, v_op->>'requested_model', (v_op->>'amount_nano')::bigint, v_op->>'day', v_op->>'month',
                  (v_op->>'created_at')::timestamptz, v_op->>'owner', (v_op->>'expires_at')::timestamptz,
                  coalesce((v_op->>'estimated_cost_nano')::bigint, 0), v_op->>'lease_id')
          ON CONFLICT (id) DO NOTHING;
          v_results[v_index] := jsonb_build_object('placed', true, 'reason', NULL, 'remaining_nano', NULL);
        END LOOP;
        -- A lease hold whose lease is gone (released while its process stalled) is checked as any other.
        FOR v_op, v_index IN SELECT value, ordinality FROM jsonb_array_elements(p_ops) WITH ORDINALITY
                             WHERE value->>'op' = 'hold' OR (value->>'op' = 'lease_hold' AND NOT (value->>'lease_id' = ANY(v_live_leases))) LOOP
          v_account := v_op->>'account_id';
          IF NOT v_available ? v_account THEN
            -- Once per account and batch, after its charges; null when a monthly budget is set
            -- (then each hold is checked by gateway_place_hold).
            SELECT a.monthly_budget_nano INTO v_budget FROM accounts a WHERE a.id = v_account;
            v_available := v_available || jsonb_build_object(v_account, CASE WHEN v_budget IS NULL THEN
              (SELECT available_nano FROM gateway_available(v_account, v_op->>'month')) END);
          END IF;
          v_left := (v_available->>v_account)::bigint;
          v_amount := (v_op->>'amount_nano')::bigint;
          v_existed := EXISTS (SELECT 1 FROM holds h WHERE h.id = v_op->>'id');
          IF v_left IS NULL OR (v_op->>'daily_limit_nano') IS NOT NULL OR v_existed THEN
            SELECT * INTO v_decision FROM gateway_place_hold(
              v_op->>'id', v_op->>'request_id', v_account, v_op->>'key_id', v_op->>'key_prefix',
              v_op->>'endpoint', (v_op->>'stream')::boolean, v_op->>'requested_model', v_amount,
              v_op->>'day', v_op->>'month', (v_op->>'created_at')::timestamptz, v_op->>'owner', (v_op->>'expires_at')::timestamptz,
              (v_op->>'daily_limit_nano')::bigint, (v_op->>'estimated_cost_nano')::bigint);
            v_results[v_index] := jsonb_build_object('placed', v_decision.placed, 'reason', v_decision.reason,
                                                     'remaining_nano', v_decision.remaining_nano);
            IF v_left IS NOT NULL AND v_decision.placed AND NOT v_existed THEN
              v_available := v_available || jsonb_build_object(v_account, v_left - v_amount);
            END IF;
          ELSIF v_amount > v_left THEN
            v_results[v_index] := jsonb_build_object('placed', false, 'reason', 'insufficient_balance', 'remaining_nano', v_left);
          ELSE
            INSERT INTO holds (id, request_id, account_id, key_id, key_prefix, endpoint, stream, requested_model,
                               amount_nano, day, month, created_at, owner, expires_at, estimated_cost_nano)
            VALUES (v_op->>'id', v_op->>'request_id', v_account, v_op->>'key_id', v_op->>'key_prefix', v_op->>'endpoint',
                    (v_op->>'stream')::boolean, v_op->>'requested_model', v_amount, v_op->>'day', v_op->>'month',
                    (v_op->>'created_at')::timestamptz, v_op->>'owner', (v_op->>'expires_at')::timestamptz,
                    coalesce((v_op->>'estimated_cost_nano')::bigint, 0));
            v_available := v_available || jsonb_build_object(v_account, v_left - v_amount);
            v_results[v_index] := jsonb_build_object('placed', true, 'reason', NULL, 'remaining_nano', NULL);
          END IF;
        END LOOP;
        RETURN to_jsonb(v_results);
      END
      $$;
    `,
  },
  {
    version: 15,
    name: 'holds journaled outside the database: adopted as ordinary holds when their lease goes',
    sql: `
      -- Names this ledger where holds are journaled outside it (a Redis hash per process, see
      -- postgres-hold-journal.ts), so two databases sharing one Redis never read each other's.
      CREATE TABLE ledger_identity (id text PRIMARY KEY);
      INSERT INTO ledger_identity (id) VALUES (md5(random()::text || clock_timestamp()::text));

      -- Journaled holds (their rows as holds_to_row writes them, in a JSON array) become ordinary
      -- holds: counted on their own, recovered when they expire or their owner is dead. One whose
      -- receipt is there (settled, its journal entry not yet removed) or whose row is there is skipped.
      CREATE FUNCTION gateway_adopt_holds(p_holds jsonb) RETURNS void
      LANGUAGE sql AS $$
        INSERT INTO holds (id, request_id, account_id, key_id, key_prefix, endpoint, stream, requested_model,
                           amount_nano, day, month, created_at, owner, expires_at, estimated_cost_nano)
        SELECT x.id, x.request_id, x.account_id, x.key_id, x.key_prefix, x.endpoint, x.stream, x.requested_model,
               x.amount_nano, x.day, x.month, x.created_at, x.owner, x.expires_at, coalesce(x.estimated_cost_nano, 0)
        FROM jsonb_to_recordset(p_holds) AS x(id text, request_id text, account_id text, key_id text, key_prefix text,
             endpoint text, stream boolean, requested_model text, amount_nano bigint, day text, month text,
             created_at timestamptz, owner text, expires_at timestamptz, estimated_cost_nano bigint)
        WHERE NOT EXISTS (SELECT 1 FROM receipts r WHERE r.id = x.id)
        ON CONFLICT (id) DO NOTHING
      $$;

      -- As in migration 12, plus the lease's journaled holds (read from the journal by the caller
      -- after it found the lease due), adopted under the lease's row lock before it is deleted: the
      -- room they used goes from the lease to holds counted on their own in one commit, never free
      -- in between. A call with three arguments (a process of the previous version) adopts none.
      DROP FUNCTION gateway_release_lease(text, timestamptz, text[]);
      CREATE FUNCTION gateway_release_lease(p_lease_id text, p_now timestamptz, p_dead_owners text[], p_journaled jsonb DEFAULT '[]')
      RETURNS boolean
      LANGUAGE plpgsql AS $$
      DECLARE
        v_lease balance_leases;
      BEGIN
        SELECT * INTO v_lease FROM balance_leases l
          WHERE l.id = p_lease_id AND (l.expires_at < p_now OR l.owner = ANY(p_dead_owners)) FOR UPDATE;
        IF NOT FOUND THEN
          RETURN false;
        END IF;
        PERFORM 1 FROM accounts WHERE id = v_lease.account_id FOR NO KEY UPDATE;
        PERFORM gateway_fold_lease(v_lease);
        UPDATE holds SET lease_id = NULL WHERE lease_id = p_lease_id;
        PERFORM gateway_adopt_holds(p_journaled);
        DELETE FROM balance_leases WHERE id = p_lease_id;
        RETURN true;
      END
      $$;
    `,
  },
  {
    version: 16,
    name: 'a settlement in a lease, alone, without the batch function',
    sql: `
      -- What gateway_apply_batch does for one receipt with a lease_id, in fewer statements: a
      -- settlement that goes alone (a quiet process, or a batch run again write by write) is the
      -- one a request waits for. Same lock order: the receipt's index entries, the lease row,
      -- then (only when the lease is gone) the account row, then the key's day.
      CREATE FUNCTION gateway_record_lease_receipt(
        p_id text, p_request_id text, p_account_id text, p_key_id text, p_key_prefix text,
        p_created_at timestamptz, p_status text, p_endpoint text, p_stream boolean,
        p_requested_model text, p_answering_model text, p_attempts jsonb, p_usage jsonb,
        p_usage_estimated boolean, p_prices jsonb, p_hold_nano bigint, p_cost_nano bigint,
        p_latency_ms double precision, p_time_to_first_token_ms double precision, p_error_code text,
        p_touch_key boolean, p_warnings jsonb, p_created_ns bigint, p_lease_id text
      ) RETURNS bigint
      LANGUAGE plpgsql AS $$
      DECLARE
        v record;
      BEGIN
        SELECT * INTO v FROM gateway_insert_receipt(
          p_id, p_request_id, p_account_id, p_key_id, p_key_prefix, p_created_at, p_status, p_endpoint, p_stream,
          p_requested_model, p_answering_model, p_attempts, p_usage, p_usage_estimated, p_prices, p_hold_nano, p_cost_nano,
          p_latency_ms, p_time_to_first_token_ms, p_error_code, p_touch_key, p_warnings, p_created_ns);
        IF v.inserted AND p_cost_nano > 0 THEN
          UPDATE balance_leases SET charged_nano = charged_nano + p_cost_nano WHERE id = p_lease_id;
          IF NOT FOUND THEN
            -- The lease is gone (released while this process stalled): the account's, as any charge.
            UPDATE accounts SET balance_nano = balance_nano - p_cost_nano WHERE id = p_account_id;
            INSERT INTO account_monthly_spend AS s (account_id, month, charged_nano)
            VALUES (p_account_id, v.month, p_cost_nano)
            ON CONFLICT (account_id, month) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
          END IF;
          INSERT INTO key_daily_spend AS s (key_id, day, account_id, charged_nano)
          VALUES (p_key_id, v.day, p_account_id, p_cost_nano)
          ON CONFLICT (key_id, day) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
        END IF;
        RETURN v.created_ns;
      END
      $$;
    `,
  },
  {
    version: 17,
    name: "key leases: a balance lease that also reserves a slice of one key's daily limit",
    sql: `
      -- A balance lease may belong to one key and UTC day (postgres-balance-leases.ts): it then
      -- also reserves that much of the key's daily limit, so the holds of a key with a daily limit
      -- go into it as into any lease, checked in memory. What a key's day has used is its charges,
      -- its holds outside its key leases, and what its key leases still reserve (granted - charged;
      -- their charges are in key_daily_spend already, with the receipts).
      ALTER TABLE balance_leases ADD COLUMN key_id text, ADD COLUMN day text;
      CREATE INDEX balance_leases_by_key_day ON balance_leases (key_id, day) WHERE key_id IS NOT NULL;

      -- p_except: a lease left out (the one being renewed, which counts its own).
      CREATE FUNCTION gateway_key_day_used(p_account_id text, p_key_id text, p_day text, p_except text) RETURNS bigint
      LANGUAGE sql AS $$
        SELECT coalesce((SELECT s.charged_nano FROM key_daily_spend s WHERE s.key_id = p_key_id AND s.day = p_day), 0)
          + (SELECT coalesce(sum(h.amount_nano), 0) FROM holds h
             WHERE h.account_id = p_account_id AND h.key_id = p_key_id AND h.day = p_day
               AND (h.lease_id IS NULL OR NOT EXISTS (SELECT 1 FROM balance_leases k WHERE k.id = h.lease_id AND k.key_id IS NOT NULL)))
          + (SELECT coalesce(sum(greatest(k.granted_nano - k.charged_nano, 0)), 0) FROM balance_leases k
             WHERE k.key_id = p_key_id AND k.day = p_day AND k.id IS DISTINCT FROM p_except)
      $$;

      -- As in migration 12, the key's day also counting what its key leases reserve (and the holds in
      -- them not again).
      CREATE OR REPLACE FUNCTION gateway_place_hold(
        p_id text, p_request_id text, p_account_id text, p_key_id text, p_key_prefix text,
        p_endpoint text, p_stream boolean, p_requested_model text, p_amount_nano bigint,
        p_day text, p_month text, p_created_at timestamptz, p_owner text, p_expires_at timestamptz,
        p_daily_limit_nano bigint, p_estimated_cost_nano bigint DEFAULT 0
      ) RETURNS TABLE (placed boolean, reason text, remaining_nano bigint)
      LANGUAGE plpgsql AS $$
      DECLARE
        v_budget bigint;
        v_room record;
        v_used bigint;
      BEGIN
        SELECT a.monthly_budget_nano INTO v_budget FROM accounts a WHERE a.id = p_account_id FOR NO KEY UPDATE;
        IF EXISTS (SELECT 1 FROM holds h WHERE h.id = p_id) THEN
          RETURN QUERY SELECT true, NULL::text, NULL::bigint;
          RETURN;
        END IF;
        SELECT * INTO v_room FROM gateway_available(p_account_id, p_month);
        IF p_amount_nano > v_room.available_nano THEN
          RETURN QUERY SELECT false, 'insufficient_balance'::text, v_room.available_nano;
          RETURN;
        END IF;
        IF p_daily_limit_nano IS NOT NULL THEN
          v_used := gateway_key_day_used(p_account_id, p_key_id, p_day, NULL);
          IF v_used + p_amount_nano > p_daily_limit_nano THEN
            RETURN QUERY SELECT false, 'daily_limit'::text, p_daily_limit_nano - v_used;
            RETURN;
          END IF;
        END IF;
        IF v_budget IS NOT NULL AND v_room.month_used_nano + p_amount_nano > v_budget THEN
          RETURN QUERY SELECT false, 'monthly_budget'::text, v_budget - v_room.month_used_nano;
          RETURN;
        END IF;
        INSERT INTO holds (id, request_id, account_id, key_id, key_prefix, endpoint, stream, requested_model,
                           amount_nano, day, month, created_at, owner, expires_at, estimated_cost_nano)
        VALUES (p_id, p_request_id, p_account_id, p_key_id, p_key_prefix, p_endpoint, p_stream, p_requested_model,
                p_amount_nano, p_day, p_month, p_created_at, p_owner, p_expires_at, coalesce(p_estimated_cost_nano, 0));
        RETURN QUERY SELECT true, NULL::text, NULL::bigint;
      END
      $$;

      DROP FUNCTION gateway_renew_lease(text, text, text, text, text, bigint, bigint, timestamptz, timestamptz);
      -- As in migration 12; a key lease (p_key_id given) is granted only when the key's day can
      -- also spare 16 times it, as the balance and the budget must.
      CREATE FUNCTION gateway_renew_lease(
        p_lease_id text, p_new_id text, p_account_id text, p_owner text, p_month text,
        p_target bigint, p_keep bigint, p_expires_at timestamptz, p_now timestamptz,
        p_key_id text DEFAULT NULL, p_day text DEFAULT NULL, p_daily_limit_nano bigint DEFAULT NULL
      ) RETURNS TABLE (lease_id text, granted_nano bigint, charged_nano bigint)
      LANGUAGE plpgsql AS $$
      DECLARE
        v_lease balance_leases;
        v_budget bigint;
        v_room record;
        v_own bigint := 0;
        v_reserve bigint;
      BEGIN
        IF p_lease_id IS NOT NULL THEN
          SELECT * INTO v_lease FROM balance_leases l WHERE l.id = p_lease_id FOR UPDATE;
          IF NOT FOUND THEN
            RETURN QUERY SELECT NULL::text, 0::bigint, 0::bigint;
            RETURN;
          END IF;
        END IF;
        SELECT a.monthly_budget_nano INTO v_budget FROM accounts a WHERE a.id = p_account_id FOR NO KEY UPDATE;
        IF p_lease_id IS NOT NULL THEN
          PERFORM gateway_fold_lease(v_lease);
          v_own := greatest(v_lease.granted_nano - v_lease.charged_nano, 0);
        END IF;
        SELECT * INTO v_room FROM gateway_available(p_account_id, p_month);
        IF p_target > 0 AND v_room.available_nano + v_own >= 16 * p_target
           AND (v_budget IS NULL OR v_budget - v_room.month_used_nano + v_own >= 16 * p_target)
           AND (p_key_id IS NULL OR p_daily_limit_nano - gateway_key_day_used(p_account_id, p_key_id, p_day, p_lease_id) >= 16 * p_target) THEN
          v_reserve := p_target;
        ELSE
          v_reserve := least(v_own, greatest(p_keep, 0));
        END IF;
        IF p_lease_id IS NULL THEN
          IF v_reserve = 0 THEN
            RETURN QUERY SELECT NULL::text, 0::bigint, 0::bigint;
            RETURN;
          END IF;
          INSERT INTO balance_leases (id, account_id, owner, month, granted_nano, expires_at, created_at, key_id, day)
          VALUES (p_new_id, p_account_id, p_owner, p_month, v_reserve, p_expires_at, p_now, p_key_id, p_day);
          RETURN QUERY SELECT p_new_id, v_reserve, 0::bigint;
          RETURN;
        END IF;
        IF v_reserve = 0 AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.lease_id = p_lease_id) THEN
          -- Nothing left to keep: handed back.
          DELETE FROM balance_leases WHERE id = p_lease_id;
          RETURN QUERY SELECT NULL::text, 0::bigint, 0::bigint;
          RETURN;
        END IF;
        UPDATE balance_leases l SET granted_nano = l.charged_nano + v_reserve, expires_at = greatest(l.expires_at, p_expires_at)
          WHERE l.id = p_lease_id;
        RETURN QUERY SELECT p_lease_id, v_lease.charged_nano + v_reserve, v_lease.charged_nano;
      END
      $$;
    `,
  },
  {
    version: 18,
    name: "a batch's receipts written as one set; receipts without a foreign key to their account",
    sql: `
      -- Every receipt comes from a key of its account (api_keys keeps its foreign key) and accounts
      -- are never deleted; the check cost each receipt a lookup and a share lock on its account's
      -- row (10% of a batched receipt's database CPU, measured).
      ALTER TABLE receipts DROP CONSTRAINT IF EXISTS receipts_account_id_fkey;

      -- As in migration 14, the receipts of the batch inserted as one statement instead of one
      -- function call each (a batched receipt cost 0.15 ms of database CPU that way, most of it
      -- the call and its statements' start-up, not the insert); the holds, the charges and the
      -- order of locks are as they were.
      CREATE OR REPLACE FUNCTION gateway_apply_batch(p_ops jsonb) RETURNS jsonb
      LANGUAGE plpgsql AS $$
      DECLARE
        v_op jsonb;
        v_index bigint;
        v_results jsonb[] := array_fill(NULL::jsonb, ARRAY[jsonb_array_length(p_ops)]);
        v_charges jsonb[] := '{}';
        v_leased text[];
        v_unleased jsonb[] := '{}';
        v_live_leases text[];
        v_receipt record;
        v_decision record;
        v_available jsonb := '{}';
        v_account text;
        v_budget bigint;
        v_left bigint;
        v_amount bigint;
        v_existed boolean;
        v_done bigint[];
        v_done_ns bigint[];
      BEGIN
        -- The batch's receipts as one set: each at the first created_ns above every receipt of its
        -- account in its millisecond (as committed when this statement starts) and above the ones
        -- of the batch before it (by created_ns, then place in the batch); its hold released, its
        -- key marked used. What this cannot insert (a receipt already there: a settlement sent
        -- again; a created_ns another batch committed meanwhile; an id twice in the batch) goes
        -- one by one below, as before.
        WITH ops AS (
          SELECT o.ord, x.*, row_number() OVER (PARTITION BY x.id ORDER BY o.ord) AS copy
          FROM jsonb_array_elements(p_ops) WITH ORDINALITY AS o(value, ord)
          CROSS JOIN LATERAL jsonb_to_record(o.value) AS x(
            id text, request_id text, account_id text, key_id text, key_prefix text, created_at timestamptz, status text,
            endpoint text, stream boolean, requested_model text, answering_model text, attempts jsonb, usage jsonb,
            usage_estimated boolean, prices jsonb, hold_nano bigint, cost_nano bigint, latency_ms double precision,
            time_to_first_token_ms double precision, error_code text, touch_key boolean, warnings jsonb, created_ns bigint,
            lease_id text)
          WHERE o.value->>'op' = 'receipt'
        ), based AS (
          SELECT o.*, row_number() OVER (PARTITION BY o.account_id ORDER BY o.created_ns, o.ord) AS rn,
                 greatest(o.created_ns, (SELECT max(r.created_ns) + 1 FROM receipts r
                   WHERE r.account_id = o.account_id AND r.created_ns >= o.created_ns
                     AND r.created_ns < o.created_ns - (o.created_ns % 1000000 + 1000000) % 1000000 + 1000000)) AS base
          FROM ops o
          WHERE o.copy = 1 AND NOT EXISTS (SELECT 1 FROM receipts r WHERE r.id = o.id)
        ), assigned AS (
          SELECT b.*, b.rn + max(b.base - b.rn) OVER (PARTITION BY b.account_id ORDER BY b.created_ns, b.ord ROWS UNBOUNDED PRECEDING) AS ns
          FROM based b
        ), inserted AS (
          INSERT INTO receipts (id, request_id, account_id, key_id, key_prefix, created_at, created_ns, status, endpoint, stream,
                                requested_model, answering_model, attempts, warnings, usage, usage_estimated, prices,
                                hold_nano, cost_nano, latency_ms, time_to_first_token_ms, error_code)
          SELECT a.id, a.request_id, a.account_id, a.key_id, a.key_prefix, a.created_at, a.ns, a.status, a.endpoint, a.stream,
                 a.requested_model, a.answering_model, a.attempts, a.warnings, a.usage, a.usage_estimated, a.prices,
                 a.hold_nano, a.cost_nano, a.latency_ms, a.time_to_first_token_ms, a.error_code
          FROM assigned a ORDER BY a.account_id, a.ns
          ON CONFLICT DO NOTHING
          RETURNING receipts.id, receipts.created_ns
        ), released AS (
          DELETE FROM holds h USING inserted i WHERE h.id = i.id RETURNING h.id, h.day, h.month
        ), touched AS (
          -- Never backwards: a long stream can finish after a later request's receipt.
          UPDATE api_keys k SET last_used_at = t.at
          FROM (SELECT a.key_id, max(a.created_at) AS at FROM assigned a JOIN inserted i ON i.id = a.id
                WHERE a.touch_key GROUP BY a.key_id ORDER BY a.key_id) AS t
          WHERE k.id = t.key_id AND (k.last_used_at IS NULL OR k.last_used_at < t.at)
          RETURNING k.id
        )
        SELECT coalesce(array_agg(a.ord), '{}'), coalesce(array_agg(i.created_ns), '{}'),
               coalesce(array_agg(jsonb_build_object('account_id', a.account_id, 'key_id', a.key_id,
                 'day', coalesce(d.day, to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')),
                 'month', coalesce(d.month, to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM')),
                 'cost', a.cost_nano, 'lease_id', a.lease_id)) FILTER (WHERE a.cost_nano > 0), '{}')
          INTO v_done, v_done_ns, v_charges
        FROM assigned a JOIN inserted i ON i.id = a.id LEFT JOIN released d ON d.id = a.id;
        FOR v_index IN 1 .. cardinality(v_done) LOOP
          v_results[v_done[v_index]] := jsonb_build_object('created_ns', v_done_ns[v_index]::text);
        END LOOP;
        FOR v_op, v_index IN SELECT value, ordinality FROM jsonb_array_elements(p_ops) WITH ORDINALITY
                             WHERE value->>'op' = 'receipt' AND NOT ordinality = ANY(v_done) ORDER BY (value->>'created_ns')::bigint LOOP
          SELECT * INTO v_receipt FROM gateway_insert_receipt(
            v_op->>'id', v_op->>'request_id', v_op->>'account_id', v_op->>'key_id', v_op->>'key_prefix',
            (v_op->>'created_at')::timestamptz, v_op->>'status', v_op->>'endpoint', (v_op->>'stream')::boolean,
            v_op->>'requested_model', v_op->>'answering_model', v_op->'attempts', nullif(v_op->'usage', 'null'::jsonb),
            (v_op->>'usage_estimated')::boolean, nullif(v_op->'prices', 'null'::jsonb), (v_op->>'hold_nano')::bigint,
            (v_op->>'cost_nano')::bigint, (v_op->>'latency_ms')::double precision,
            (v_op->>'time_to_first_token_ms')::double precision, v_op->>'error_code',
            (v_op->>'touch_key')::boolean, v_op->'warnings', (v_op->>'created_ns')::bigint);
          v_results[v_index] := jsonb_build_object('created_ns', v_receipt.created_ns::text);
          IF v_receipt.inserted AND (v_op->>'cost_nano')::bigint > 0 THEN
            v_charges := v_charges || jsonb_build_object('account_id', v_op->>'account_id', 'key_id', v_op->>'key_id',
              'day', v_receipt.day, 'month', v_receipt.month, 'cost', (v_op->>'cost_nano')::bigint, 'lease_id', v_op->>'lease_id');
          END IF;
        END LOOP;
        IF cardinality(v_charges) > 0 THEN
          WITH charged AS (
            UPDATE balance_leases AS l SET charged_nano = l.charged_nano + c.total
            FROM (SELECT x->>'lease_id' AS id, sum((x->>'cost')::bigint)::bigint AS total FROM unnest(v_charges) AS x
                  WHERE x->>'lease_id' IS NOT NULL GROUP BY 1 ORDER BY 1) AS c
            WHERE l.id = c.id RETURNING l.id)
          SELECT coalesce(array_agg(id), '{}') INTO v_leased FROM charged;
          -- What no lease took is the account's.
          SELECT coalesce(array_agg(x), '{}') INTO v_unleased FROM unnest(v_charges) AS x
            WHERE x->>'lease_id' IS NULL OR NOT (x->>'lease_id' = ANY(v_leased));
        END IF;
        -- The leases of the batch's lease holds, held until the commit so none is released meanwhile
        -- (gateway_release_lease detaches a lease's holds under its row lock: it then sees these).
        SELECT coalesce(array_agg(l.id), '{}') INTO v_live_leases FROM (
          SELECT l.id FROM balance_leases l
          WHERE l.id IN (SELECT o->>'lease_id' FROM jsonb_array_elements(p_ops) AS o WHERE o->>'op' = 'lease_hold')
          ORDER BY l.id FOR SHARE) AS l;
        PERFORM 1 FROM accounts
          WHERE id IN (SELECT x->>'account_id' FROM unnest(v_unleased) AS x
                       UNION SELECT o->>'account_id' FROM jsonb_array_elements(p_ops) AS o
                       WHERE o->>'op' = 'hold' OR (o->>'op' = 'lease_hold' AND NOT (o->>'lease_id' = ANY(v_live_leases))))
          ORDER BY id FOR NO KEY UPDATE;
        IF cardinality(v_unleased) > 0 THEN
          UPDATE accounts AS a SET balance_nano = a.balance_nano - c.total
          FROM (SELECT x->>'account_id' AS id, sum((x->>'cost')::bigint)::bigint AS total FROM unnest(v_unleased) AS x GROUP BY 1) AS c
          WHERE a.id = c.id;
          INSERT INTO account_monthly_spend AS s (account_id, month, charged_nano)
          SELECT x->>'account_id', x->>'month', sum((x->>'cost')::bigint)::bigint FROM unnest(v_unleased) AS x GROUP BY 1, 2
          ON CONFLICT (account_id, month) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
        END IF;
        IF cardinality(v_charges) > 0 THEN
          INSERT INTO key_daily_spend AS s (key_id, day, account_id, charged_nano)
          SELECT x->>'key_id', x->>'day', min(x->>'account_id'), sum((x->>'cost')::bigint)::bigint FROM unnest(v_charges) AS x
          GROUP BY 1, 2 ORDER BY 1, 2
          ON CONFLICT (key_id, day) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
        END IF;
        FOR v_op, v_index IN SELECT value, ordinality FROM jsonb_array_elements(p_ops) WITH ORDINALITY
                             WHERE value->>'op' = 'lease_hold' AND value->>'lease_id' = ANY(v_live_leases) LOOP
          INSERT INTO holds (id, request_id, account_id, key_id, key_prefix, endpoint, stream, requested_model,
                             amount_nano, day, month, created_at, owner, expires_at, estimated_cost_nano, lease_id)
          VALUES (v_op->>'id', v_op->>'request_id', v_op->>'account_id', v_op->>'key_id', v_op->>'key_prefix', v_op->>'endpoint',
                  (v_op->>'stream')::boolean, v_op->>'requested_model', (v_op->>'amount_nano')::bigint, v_op->>'day', v_op->>'month',
                  (v_op->>'created_at')::timestamptz, v_op->>'owner', (v_op->>'expires_at')::timestamptz,
                  coalesce((v_op->>'estimated_cost_nano')::bigint, 0), v_op->>'lease_id')
          ON CONFLICT (id) DO NOTHING;
          v_results[v_index] := jsonb_build_object('placed', true, 'reason', NULL, 'remaining_nano', NULL);
        END LOOP;
        -- A lease hold whose lease is gone (released while its process stalled) is checked as any other.
        FOR v_op, v_index IN SELECT value, ordinality FROM jsonb_array_elements(p_ops) WITH ORDINALITY
                             WHERE value->>'op' = 'hold' OR (value->>'op' = 'lease_hold' AND NOT (value->>'lease_id' = ANY(v_live_leases))) LOOP
          v_account := v_op->>'account_id';
          IF NOT v_available ? v_account THEN
            -- Once per account and batch, after its charges; null when a monthly budget is set
            -- (then each hold is checked by gateway_place_hold).
            SELECT a.monthly_budget_nano INTO v_budget FROM accounts a WHERE a.id = v_account;
            v_available := v_available || jsonb_build_object(v_account, CASE WHEN v_budget IS NULL THEN
              (SELECT available_nano FROM gateway_available(v_account, v_op->>'month')) END);
          END IF;
          v_left := (v_available->>v_account)::bigint;
          v_amount := (v_op->>'amount_nano')::bigint;
          v_existed := EXISTS (SELECT 1 FROM holds h WHERE h.id = v_op->>'id');
          IF v_left IS NULL OR (v_op->>'daily_limit_nano') IS NOT NULL OR v_existed THEN
            SELECT * INTO v_decision FROM gateway_place_hold(
              v_op->>'id', v_op->>'request_id', v_account, v_op->>'key_id', v_op->>'key_prefix',
              v_op->>'endpoint', (v_op->>'stream')::boolean, v_op->>'requested_model', v_amount,
              v_op->>'day', v_op->>'month', (v_op->>'created_at')::timestamptz, v_op->>'owner', (v_op->>'expires_at')::timestamptz,
              (v_op->>'daily_limit_nano')::bigint, (v_op->>'estimated_cost_nano')::bigint);
            v_results[v_index] := jsonb_build_object('placed', v_decision.placed, 'reason', v_decision.reason,
                                                     'remaining_nano', v_decision.remaining_nano);
            IF v_left IS NOT NULL AND v_decision.placed AND NOT v_existed THEN
              v_available := v_available || jsonb_build_object(v_account, v_left - v_amount);
            END IF;
          ELSIF v_amount > v_left THEN
            v_results[v_index] := jsonb_build_object('placed', false, 'reason', 'insufficient_balance', 'remaining_nano', v_left);
          ELSE
            INSERT INTO holds (id, request_id, account_id, key_id, key_prefix, endpoint, stream, requested_model,
                               amount_nano, day, month, created_at, owner, expires_at, estimated_cost_nano)
            VALUES (v_op->>'id', v_op->>'request_id', v_account, v_op->>'key_id', v_op->>'key_prefix', v_op->>'endpoint',
                    (v_op->>'stream')::boolean, v_op->>'requested_model', v_amount, v_op->>'day', v_op->>'month',
                    (v_op->>'created_at')::timestamptz, v_op->>'owner', (v_op->>'expires_at')::timestamptz,
                    coalesce((v_op->>'estimated_cost_nano')::bigint, 0));
            v_available := v_available || jsonb_build_object(v_account, v_left - v_amount);
            v_results[v_index] := jsonb_build_object('placed', true, 'reason', NULL, 'remaining_nano', NULL);
          END IF;
        END LOOP;
        RETURN to_jsonb(v_results);
      END
      $$;
    `,
  },
  {
    version: 19,
    name: 'the batch function plans its statements once per connection',
    sql: `
      -- Its statements take the batch as a parameter, and PostgreSQL kept planning them for each
      -- call (a custom plan judged cheaper than the generic one): a batch of one settlement took
      -- 1.0 ms, 0.5 ms with the generic plans (measured on this schema, 69,000 receipts).
      ALTER FUNCTION gateway_apply_batch(jsonb) SET plan_cache_mode = force_generic_plan;
    `,
  },
  {
    version: 20,
    name: "a millisecond's last receipt read from its own index; settlements alone and in batches in fewer statements",
    sql: `
      -- The last receipt of a millisecond was looked up as max(created_ns) over the account's
      -- receipts of that millisecond. A plan made while receipts was nearly empty (a new database,
      -- or one never analyzed: autovacuum off) could read it from receipts_by_key_created, whose
      -- key_id column comes between account_id and created_ns: every receipt of the account was
      -- then read for each settlement, 4.5 ms each at 100,000 receipts (0.03 ms as below),
      -- growing with the table. Asked in the order of receipts_by_account_created, newest first,
      -- only that index answers it without sorting, so it is the one planned at any size.
      CREATE OR REPLACE FUNCTION gateway_insert_receipt(
        p_id text, p_request_id text, p_account_id text, p_key_id text, p_key_prefix text,
        p_created_at timestamptz, p_status text, p_endpoint text, p_stream boolean,
        p_requested_model text, p_answering_model text, p_attempts jsonb, p_usage jsonb,
        p_usage_estimated boolean, p_prices jsonb, p_hold_nano bigint, p_cost_nano bigint,
        p_latency_ms double precision, p_time_to_first_token_ms double precision, p_error_code text,
        p_touch_key boolean, p_warnings jsonb, p_created_ns bigint
      ) RETURNS TABLE (created_ns bigint, inserted boolean, day text, month text)
      LANGUAGE plpgsql AS $$
      DECLARE
        v_ns bigint := p_created_ns;
        v_existing bigint;
        v_day text;
        v_month text;
      BEGIN
        SELECT r.created_ns INTO v_existing FROM receipts r WHERE r.id = p_id;
        IF FOUND THEN
          DELETE FROM holds WHERE id = p_id;
          RETURN QUERY SELECT v_existing, false, NULL::text, NULL::text;
          RETURN;
        END IF;
        LOOP
          -- Above every value taken from v_ns to the end of its millisecond, as committed when this statement starts.
          SELECT coalesce((SELECT r.created_ns + 1 FROM receipts r
            WHERE r.account_id = p_account_id AND r.created_ns >= v_ns
              AND r.created_ns < v_ns - (v_ns % 1000000 + 1000000) % 1000000 + 1000000
            ORDER BY r.account_id DESC, r.created_ns DESC LIMIT 1), v_ns) INTO v_ns;
          INSERT INTO receipts (id, request_id, account_id, key_id, key_prefix, created_at, created_ns, status, endpoint, stream,
                                requested_model, answering_model, attempts, warnings, usage, usage_estimated, prices,
                                hold_nano, cost_nano, latency_ms, time_to_first_token_ms, error_code)
          VALUES (p_id, p_request_id, p_account_id, p_key_id, p_key_prefix, p_created_at, v_ns, p_status, p_endpoint, p_stream,
                  p_requested_model, p_answering_model, p_attempts, p_warnings, p_usage, p_usage_estimated, p_prices,
                  p_hold_nano, p_cost_nano, p_latency_ms, p_time_to_first_token_ms, p_error_code)
          ON CONFLICT DO NOTHING;
          EXIT WHEN FOUND;
          -- A free-of-charge copy of this settlement committed meanwhile: it stands.
          SELECT r.created_ns INTO v_existing FROM receipts r WHERE r.id = p_id;
          IF FOUND THEN
            DELETE FROM holds WHERE id = p_id;
            RETURN QUERY SELECT v_existing, false, NULL::text, NULL::text;
            RETURN;
          END IF;
          -- Taken by a settlement that committed while this one waited, as others waiting may find
          -- too: look again from a little past it, at random, so they do not all want the next one.
          v_ns := v_ns + 1 + floor(random() * 64)::bigint;
        END LOOP;
        DELETE FROM holds h WHERE h.id = p_id RETURNING h.day, h.month INTO v_day, v_month;
        -- Never move backwards: a long stream can finish after a later request's receipt.
        IF p_touch_key THEN
          UPDATE api_keys SET last_used_at = p_created_at
          WHERE id = p_key_id AND (last_used_at IS NULL OR last_used_at < p_created_at);
        END IF;
        -- Without its hold (recovered, or never placed) a cost counts on the receipt's UTC day.
        RETURN QUERY SELECT v_ns, true,
          coalesce(v_day, to_char(p_created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')),
          coalesce(v_month, to_char(p_created_at AT TIME ZONE 'UTC', 'YYYY-MM'));
      END
      $$;

      -- Migration 18's batch with that lookup (its generic plans, migration 19, kept), and without
      -- its passes for holds when it has none (every batch of a process whose holds are journaled
      -- outside the database): they read the batch's JSON four more times (the leases to keep, the
      -- accounts to lock, the two loops over holds) to find nothing. The rest is as it was, in the
      -- same lock order: the receipts' index entries, the lease rows, the account rows (for charges
      -- no lease took, and for holds), the keys' days, the holds.
      CREATE OR REPLACE FUNCTION gateway_apply_batch(p_ops jsonb) RETURNS jsonb
      LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
      DECLARE
        v_op jsonb;
        v_index bigint;
        v_results jsonb[] := array_fill(NULL::jsonb, ARRAY[jsonb_array_length(p_ops)]);
        v_charges jsonb[] := '{}';
        v_leased text[];
        v_unleased jsonb[] := '{}';
        v_live_leases text[] := '{}';
        v_holds boolean := jsonb_path_exists(p_ops, '$[*] ? (@.op != "receipt")');
        v_receipt record;
        v_decision record;
        v_available jsonb := '{}';
        v_account text;
        v_budget bigint;
        v_left bigint;
        v_amount bigint;
        v_existed boolean;
        v_done bigint[];
        v_done_ns bigint[];
      BEGIN
        -- The batch's receipts as one set: each at the first created_ns above every receipt of its
        -- account in its millisecond (as committed when this statement starts) and above the ones
        -- of the batch before it (by created_ns, then place in the batch); its hold released, its
        -- key marked used. What this cannot insert (a receipt already there: a settlement sent
        -- again; a created_ns another batch committed meanwhile; an id twice in the batch) goes
        -- one by one below, as before.
        WITH ops AS (
          SELECT o.ord, x.*, row_number() OVER (PARTITION BY x.id ORDER BY o.ord) AS copy
          FROM jsonb_array_elements(p_ops) WITH ORDINALITY AS o(value, ord)
          CROSS JOIN LATERAL jsonb_to_record(o.value) AS x(
            id text, request_id text, account_id text, key_id text, key_prefix text, created_at timestamptz, status text,
            endpoint text, stream boolean, requested_model text, answering_model text, attempts jsonb, usage jsonb,
            usage_estimated boolean, prices jsonb, hold_nano bigint, cost_nano bigint, latency_ms double precision,
            time_to_first_token_ms double precision, error_code text, touch_key boolean, warnings jsonb, created_ns bigint,
            lease_id text)
          WHERE o.value->>'op' = 'receipt'
        ), based AS (
          SELECT o.*, row_number() OVER (PARTITION BY o.account_id ORDER BY o.created_ns, o.ord) AS rn,
                 greatest(o.created_ns, (SELECT r.created_ns + 1 FROM receipts r
                   WHERE r.account_id = o.account_id AND r.created_ns >= o.created_ns
                     AND r.created_ns < o.created_ns - (o.created_ns % 1000000 + 1000000) % 1000000 + 1000000
                   ORDER BY r.account_id DESC, r.created_ns DESC LIMIT 1)) AS base
          FROM ops o
          WHERE o.copy = 1 AND NOT EXISTS (SELECT 1 FROM receipts r WHERE r.id = o.id)
        ), assigned AS (
          SELECT b.*, b.rn + max(b.base - b.rn) OVER (PARTITION BY b.account_id ORDER BY b.created_ns, b.ord ROWS UNBOUNDED PRECEDING) AS ns
          FROM based b
        ), inserted AS (
          INSERT INTO receipts (id, request_id, account_id, key_id, key_prefix, created_at, created_ns, status, endpoint, stream,
                                requested_model, answering_model, attempts, warnings, usage, usage_estimated, prices,
                                hold_nano, cost_nano, latency_ms, time_to_first_token_ms, error_code)
          SELECT a.id, a.request_id, a.account_id, a.key_id, a.key_prefix, a.created_at, a.ns, a.status, a.endpoint, a.stream,
                 a.requested_model, a.answering_model, a.attempts, a.warnings, a.usage, a.usage_estimated, a.prices,
                 a.hold_nano, a.cost_nano, a.latency_ms, a.time_to_first_token_ms, a.error_code
          FROM assigned a ORDER BY a.account_id, a.ns
          ON CONFLICT DO NOTHING
          RETURNING receipts.id, receipts.created_ns
        ), released AS (
          DELETE FROM holds h USING inserted i WHERE h.id = i.id RETURNING h.id, h.day, h.month
        ), touched AS (
          -- Never backwards: a long stream can finish after a later request's receipt.
          UPDATE api_keys k SET last_used_at = t.at
          FROM (SELECT a.key_id, max(a.created_at) AS at FROM assigned a JOIN inserted i ON i.id = a.id
                WHERE a.touch_key GROUP BY a.key_id ORDER BY a.key_id) AS t
          WHERE k.id = t.key_id AND (k.last_used_at IS NULL OR k.last_used_at < t.at)
          RETURNING k.id
        )
        SELECT coalesce(array_agg(a.ord), '{}'), coalesce(array_agg(i.created_ns), '{}'),
               coalesce(array_agg(jsonb_build_object('account_id', a.account_id, 'key_id', a.key_id,
                 'day', coalesce(d.day, to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')),
                 'month', coalesce(d.month, to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM')),
                 'cost', a.cost_nano, 'lease_id', a.lease_id)) FILTER (WHERE a.cost_nano > 0), '{}')
          INTO v_done, v_done_ns, v_charges
        FROM assigned a JOIN inserted i ON i.id = a.id LEFT JOIN released d ON d.id = a.id;
        FOR v_index IN 1 .. cardinality(v_done) LOOP
          v_results[v_done[v_index]] := jsonb_build_object('created_ns', v_done_ns[v_index]::text);
        END LOOP;
        FOR v_op, v_index IN SELECT value, ordinality FROM jsonb_array_elements(p_ops) WITH ORDINALITY
                             WHERE value->>'op' = 'receipt' AND NOT ordinality = ANY(v_done) ORDER BY (value->>'created_ns')::bigint LOOP
          SELECT * INTO v_receipt FROM gateway_insert_receipt(
            v_op->>'id', v_op->>'request_id', v_op->>'account_id', v_op->>'key_id', v_op->>'key_prefix',
            (v_op->>'created_at')::timestamptz, v_op->>'status', v_op->>'endpoint', (v_op->>'stream')::boolean,
            v_op->>'requested_model', v_op->>'answering_model', v_op->'attempts', nullif(v_op->'usage', 'null'::jsonb),
            (v_op->>'usage_estimated')::boolean, nullif(v_op->'prices', 'null'::jsonb), (v_op->>'hold_nano')::bigint,
            (v_op->>'cost_nano')::bigint, (v_op->>'latency_ms')::double precision,
            (v_op->>'time_to_first_token_ms')::double precision, v_op->>'error_code',
            (v_op->>'touch_key')::boolean, v_op->'warnings', (v_op->>'created_ns')::bigint);
          v_results[v_index] := jsonb_build_object('created_ns', v_receipt.created_ns::text);
          IF v_receipt.inserted AND (v_op->>'cost_nano')::bigint > 0 THEN
            v_charges := v_charges || jsonb_build_object('account_id', v_op->>'account_id', 'key_id', v_op->>'key_id',
              'day', v_receipt.day, 'month', v_receipt.month, 'cost', (v_op->>'cost_nano')::bigint, 'lease_id', v_op->>'lease_id');
          END IF;
        END LOOP;
        IF cardinality(v_charges) > 0 THEN
          WITH charged AS (
            UPDATE balance_leases AS l SET charged_nano = l.charged_nano + c.total
            FROM (SELECT x->>'lease_id' AS id, sum((x->>'cost')::bigint)::bigint AS total FROM unnest(v_charges) AS x
                  WHERE x->>'lease_id' IS NOT NULL GROUP BY 1 ORDER BY 1) AS c
            WHERE l.id = c.id RETURNING l.id)
          SELECT coalesce(array_agg(id), '{}') INTO v_leased FROM charged;
          -- What no lease took is the account's.
          SELECT coalesce(array_agg(x), '{}') INTO v_unleased FROM unnest(v_charges) AS x
            WHERE x->>'lease_id' IS NULL OR NOT (x->>'lease_id' = ANY(v_leased));
        END IF;
        IF v_holds THEN
          -- The leases of the batch's lease holds, held until the commit so none is released meanwhile
          -- (gateway_release_lease detaches a lease's holds under its row lock: it then sees these).
          SELECT coalesce(array_agg(l.id), '{}') INTO v_live_leases FROM (
            SELECT l.id FROM balance_leases l
            WHERE l.id IN (SELECT o->>'lease_id' FROM jsonb_array_elements(p_ops) AS o WHERE o->>'op' = 'lease_hold')
            ORDER BY l.id FOR SHARE) AS l;
        END IF;
        IF v_holds OR cardinality(v_unleased) > 0 THEN
          PERFORM 1 FROM accounts
            WHERE id IN (SELECT x->>'account_id' FROM unnest(v_unleased) AS x
                         UNION SELECT o->>'account_id' FROM jsonb_array_elements(p_ops) AS o
                         WHERE o->>'op' = 'hold' OR (o->>'op' = 'lease_hold' AND NOT (o->>'lease_id' = ANY(v_live_leases))))
            ORDER BY id FOR NO KEY UPDATE;
        END IF;
        IF cardinality(v_unleased) > 0 THEN
          UPDATE accounts AS a SET balance_nano = a.balance_nano - c.total
          FROM (SELECT x->>'account_id' AS id, sum((x->>'cost')::bigint)::bigint AS total FROM unnest(v_unleased) AS x GROUP BY 1) AS c
          WHERE a.id = c.id;
          INSERT INTO account_monthly_spend AS s (account_id, month, charged_nano)
          SELECT x->>'account_id', x->>'month', sum((x->>'cost')::bigint)::bigint FROM unnest(v_unleased) AS x GROUP BY 1, 2
          ON CONFLICT (account_id, month) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
        END IF;
        IF cardinality(v_charges) > 0 THEN
          INSERT INTO key_daily_spend AS s (key_id, day, account_id, charged_nano)
          SELECT x->>'key_id', x->>'day', min(x->>'account_id'), sum((x->>'cost')::bigint)::bigint FROM unnest(v_charges) AS x
          GROUP BY 1, 2 ORDER BY 1, 2
          ON CONFLICT (key_id, day) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
        END IF;
        IF v_holds THEN
          FOR v_op, v_index IN SELECT value, ordinality FROM jsonb_array_elements(p_ops) WITH ORDINALITY
                               WHERE value->>'op' = 'lease_hold' AND value->>'lease_id' = ANY(v_live_leases) LOOP
            INSERT INTO holds (id, request_id, account_id, key_id, key_prefix, endpoint, stream, requested_model,
                               amount_nano, day, month, created_at, owner, expires_at, estimated_cost_nano, lease_id)
            VALUES (v_op->>'id', v_op->>'request_id', v_op->>'account_id', v_op->>'key_id', v_op->>'key_prefix', v_op->>'endpoint',
                    (v_op->>'stream')::boolean, v_op->>'requested_model', (v_op->>'amount_nano')::bigint, v_op->>'day', v_op->>'month',
                    (v_op->>'created_at')::timestamptz, v_op->>'owner', (v_op->>'expires_at')::timestamptz,
                    coalesce((v_op->>'estimated_cost_nano')::bigint, 0), v_op->>'lease_id')
            ON CONFLICT (id) DO NOTHING;
            v_results[v_index] := jsonb_build_object('placed', true, 'reason', NULL, 'remaining_nano', NULL);
          END LOOP;
          -- A lease hold whose lease is gone (released while its process stalled) is checked as any other.
          FOR v_op, v_index IN SELECT value, ordinality FROM jsonb_array_elements(p_ops) WITH ORDINALITY
                               WHERE value->>'op' = 'hold' OR (value->>'op' = 'lease_hold' AND NOT (value->>'lease_id' = ANY(v_live_leases))) LOOP
            v_account := v_op->>'account_id';
            IF NOT v_available ? v_account THEN
              -- Once per account and batch, after its charges; null when a monthly budget is set
              -- (then each hold is checked by gateway_place_hold).
              SELECT a.monthly_budget_nano INTO v_budget FROM accounts a WHERE a.id = v_account;
              v_available := v_available || jsonb_build_object(v_account, CASE WHEN v_budget IS NULL THEN
                (SELECT available_nano FROM gateway_available(v_account, v_op->>'month')) END);
            END IF;
            v_left := (v_available->>v_account)::bigint;
            v_amount := (v_op->>'amount_nano')::bigint;
            v_existed := EXISTS (SELECT 1 FROM holds h WHERE h.id = v_op->>'id');
            IF v_left IS NULL OR (v_op->>'daily_limit_nano') IS NOT NULL OR v_existed THEN
              SELECT * INTO v_decision FROM gateway_place_hold(
                v_op->>'id', v_op->>'request_id', v_account, v_op->>'key_id', v_op->>'key_prefix',
                v_op->>'endpoint', (v_op->>'stream')::boolean, v_op->>'requested_model', v_amount,
                v_op->>'day', v_op->>'month', (v_op->>'created_at')::timestamptz, v_op->>'owner', (v_op->>'expires_at')::timestamptz,
                (v_op->>'daily_limit_nano')::bigint, (v_op->>'estimated_cost_nano')::bigint);
              v_results[v_index] := jsonb_build_object('placed', v_decision.placed, 'reason', v_decision.reason,
                                                       'remaining_nano', v_decision.remaining_nano);
              IF v_left IS NOT NULL AND v_decision.placed AND NOT v_existed THEN
                v_available := v_available || jsonb_build_object(v_account, v_left - v_amount);
              END IF;
            ELSIF v_amount > v_left THEN
              v_results[v_index] := jsonb_build_object('placed', false, 'reason', 'insufficient_balance', 'remaining_nano', v_left);
            ELSE
              INSERT INTO holds (id, request_id, account_id, key_id, key_prefix, endpoint, stream, requested_model,
                                 amount_nano, day, month, created_at, owner, expires_at, estimated_cost_nano)
              VALUES (v_op->>'id', v_op->>'request_id', v_account, v_op->>'key_id', v_op->>'key_prefix', v_op->>'endpoint',
                      (v_op->>'stream')::boolean, v_op->>'requested_model', v_amount, v_op->>'day', v_op->>'month',
                      (v_op->>'created_at')::timestamptz, v_op->>'owner', (v_op->>'expires_at')::timestamptz,
                      coalesce((v_op->>'estimated_cost_nano')::bigint, 0));
              v_available := v_available || jsonb_build_object(v_account, v_left - v_amount);
              v_results[v_index] := jsonb_build_object('placed', true, 'reason', NULL, 'remaining_nano', NULL);
            END IF;
          END LOOP;
        END IF;
        RETURN to_jsonb(v_results);
      END
      $$;

      -- One settlement in a lease, alone (what a request at concurrency 1 waits for, and most of
      -- the batches of a lightly loaded process): the receipt is inserted at the first free
      -- created_ns of its millisecond in one statement, without first looking for an earlier copy
      -- of itself and without the nested call (gateway_insert_receipt). When that inserts nothing
      -- (a settlement sent again, or its created_ns taken by a batch that committed meanwhile), the
      -- receipt goes the way it went before, which tells the two apart. Same lock order: the
      -- receipt's index entries, the lease row, then (only when the lease is gone) the account
      -- row, then the key's day.
      CREATE OR REPLACE FUNCTION gateway_record_lease_receipt(
        p_id text, p_request_id text, p_account_id text, p_key_id text, p_key_prefix text,
        p_created_at timestamptz, p_status text, p_endpoint text, p_stream boolean,
        p_requested_model text, p_answering_model text, p_attempts jsonb, p_usage jsonb,
        p_usage_estimated boolean, p_prices jsonb, p_hold_nano bigint, p_cost_nano bigint,
        p_latency_ms double precision, p_time_to_first_token_ms double precision, p_error_code text,
        p_touch_key boolean, p_warnings jsonb, p_created_ns bigint, p_lease_id text
      ) RETURNS bigint
      LANGUAGE plpgsql AS $$
      DECLARE
        v record;
        v_ns bigint;
        v_day text;
        v_month text;
      BEGIN
        INSERT INTO receipts (id, request_id, account_id, key_id, key_prefix, created_at, created_ns, status, endpoint, stream,
                              requested_model, answering_model, attempts, warnings, usage, usage_estimated, prices,
                              hold_nano, cost_nano, latency_ms, time_to_first_token_ms, error_code)
        VALUES (p_id, p_request_id, p_account_id, p_key_id, p_key_prefix, p_created_at,
                -- Above every value taken from p_created_ns to the end of its millisecond, as committed when this statement starts.
                greatest(p_created_ns, (SELECT r.created_ns + 1 FROM receipts r
                  WHERE r.account_id = p_account_id AND r.created_ns >= p_created_ns
                    AND r.created_ns < p_created_ns - (p_created_ns % 1000000 + 1000000) % 1000000 + 1000000
                  ORDER BY r.account_id DESC, r.created_ns DESC LIMIT 1)),
                p_status, p_endpoint, p_stream, p_requested_model, p_answering_model, p_attempts, p_warnings, p_usage,
                p_usage_estimated, p_prices, p_hold_nano, p_cost_nano, p_latency_ms, p_time_to_first_token_ms, p_error_code)
        ON CONFLICT DO NOTHING
        RETURNING created_ns INTO v_ns;
        IF FOUND THEN
          DELETE FROM holds h WHERE h.id = p_id RETURNING h.day, h.month INTO v_day, v_month;
          -- Never move backwards: a long stream can finish after a later request's receipt.
          IF p_touch_key THEN
            UPDATE api_keys SET last_used_at = p_created_at
            WHERE id = p_key_id AND (last_used_at IS NULL OR last_used_at < p_created_at);
          END IF;
          -- Without its hold (recovered, or never placed) a cost counts on the receipt's UTC day.
          v_day := coalesce(v_day, to_char(p_created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'));
          v_month := coalesce(v_month, to_char(p_created_at AT TIME ZONE 'UTC', 'YYYY-MM'));
        ELSE
          SELECT * INTO v FROM gateway_insert_receipt(
            p_id, p_request_id, p_account_id, p_key_id, p_key_prefix, p_created_at, p_status, p_endpoint, p_stream,
            p_requested_model, p_answering_model, p_attempts, p_usage, p_usage_estimated, p_prices, p_hold_nano, p_cost_nano,
            p_latency_ms, p_time_to_first_token_ms, p_error_code, p_touch_key, p_warnings, p_created_ns);
          -- Already there: it was charged when it was written.
          IF NOT v.inserted THEN
            RETURN v.created_ns;
          END IF;
          v_ns := v.created_ns;
          v_day := v.day;
          v_month := v.month;
        END IF;
        IF p_cost_nano > 0 THEN
          UPDATE balance_leases SET charged_nano = charged_nano + p_cost_nano WHERE id = p_lease_id;
          IF NOT FOUND THEN
            -- The lease is gone (released while this process stalled): the account's, as any charge.
            UPDATE accounts SET balance_nano = balance_nano - p_cost_nano WHERE id = p_account_id;
            INSERT INTO account_monthly_spend AS s (account_id, month, charged_nano)
            VALUES (p_account_id, v_month, p_cost_nano)
            ON CONFLICT (account_id, month) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
          END IF;
          INSERT INTO key_daily_spend AS s (key_id, day, account_id, charged_nano)
          VALUES (p_key_id, v_day, p_account_id, p_cost_nano)
          ON CONFLICT (key_id, day) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
        END IF;
        RETURN v_ns;
      END
      $$;
    `,
  },
];

/**
 * Apply every migration not yet recorded in schema_migrations, then make sure the default
 * account exists, all in one transaction. The transaction-scoped advisory lock (one per
 * schema) makes processes that start at once take turns: the first applies, the others then
 * find nothing left to do. DDL in PostgreSQL is transactional, so a failure leaves nothing half done.
 */
export async function applyMigrations(client: PoolClient, now: () => string = () => new Date().toISOString()): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtext('model-gateway migrations ' || coalesce(current_schema(), '')))");
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL
    )`);
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const applied = new Set(rows.map((row) => row.version));
    const newest = migrations.at(-1)?.version ?? 0;
    const unknown = [...applied].filter((version) => version > newest);
    if (unknown.length) {
      throw new Error(`the database has schema version ${Math.max(...unknown)}, newer than this gateway knows (${newest}); upgrade the gateway`);
    }
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [migration.version, migration.name, now()]);
    }
    await client.query('INSERT INTO accounts (id, balance_nano, created_at) VALUES ($1, 0, $2) ON CONFLICT (id) DO NOTHING', [
      DEFAULT_ACCOUNT_ID,
      now(),
    ]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
