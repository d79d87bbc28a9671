-- One settlement in a lease, alone (what a request at concurrency 1 waits for, and most of the
-- batches of a lightly loaded process): what gateway_apply_batch does for one receipt with a
-- lease_id, in fewer statements. The receipt is inserted at the first free created_ns of its
-- millisecond in one statement, without first looking for an earlier copy of itself and without
-- the nested call (gateway_insert_receipt). When that inserts nothing (a settlement sent again,
-- or its created_ns taken by a batch that committed meanwhile), the receipt goes through
-- gateway_insert_receipt, which tells the two apart. Lock order: the receipt's index entries,
-- the lease row, then (only when the lease is gone) the account row, then the key's day.
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
