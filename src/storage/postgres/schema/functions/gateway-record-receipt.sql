-- One settlement alone, outside a lease: the receipt (gateway_insert_receipt), then its charge to
-- the balance, the key's day and the account's month. It writes its receipt before it locks the
-- account row, as a batch does: every writer takes receipts' index entries before account rows,
-- and no two wait for each other in a circle. Two copies of one settlement charge once: the
-- second meets the first on the receipts' primary key and writes nothing.
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
