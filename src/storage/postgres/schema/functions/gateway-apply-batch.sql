-- Group commit (postgres-group-commit.ts): the holds and settlements one process gathered while
-- its previous batch was out, in one statement and one transaction; any error undoes the whole
-- batch and the caller runs its operations one by one. Its operations were all in flight at once,
-- so any order is one they could have had: settlements first, then holds.
-- - The receipts are written as one set before any account row is locked: writing them needs no
--   lock (two copies of one settlement meet on the receipts' primary key, and the second writes
--   and charges nothing), so batches of several processes write their receipts side by side.
-- - A receipt with a lease_id adds its cost to that lease's charged total (the lease row is the
--   process's own), unless the lease is gone (recovered): then it is charged as any other.
-- - The other costs are summed and charged once per account, key day and month (one row version
--   each per batch), before any hold of the batch is checked: a hold never sees a released hold
--   without its charge.
-- - op 'lease_hold': a hold inside the process's lease (it checked its room in memory), inserted
--   with its lease_id without locking the account row; the leases are share-locked first, and
--   one whose lease is gone goes through the checks of an ordinary hold.
-- - The holds of an account without a monthly budget, from keys without a daily limit, are
--   checked against one running figure (the balance less the account's holds, summed once after
--   the charges); any other hold goes through gateway_place_hold.
-- - A batch without holds (a process whose holds are journaled outside the database) skips the
--   passes for holds.
-- Lock order, as every other writer: the receipts' index entries, the lease rows, the account rows
-- (in id order: for charges no lease took, and for holds), the keys' days, the holds. Its
-- statements take the batch as a parameter: generic plans, made once per connection (custom plans
-- made it 1.0 ms a batch of one settlement, 0.5 ms generic).
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
    SELECT * INTO v_receipt FROM gateway_insert_receipt(jsonb_populate_record(NULL::receipts, v_op), (v_op->>'touch_key')::boolean);
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
