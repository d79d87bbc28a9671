-- Places a hold after its checks (balance, the key's day, the account's month), or says which
-- check refused it and how much room was left. Locks the account row first, so placements,
-- charges and top-ups of one account take turns; every later statement (READ COMMITTED, volatile
-- function) sees what the previous holder committed. FOR NO KEY UPDATE, not FOR UPDATE: it
-- conflicts with every writer of the row but not with the foreign-key checks of inserts into
-- holds. A key belongs to one account, so its daily sums are covered by the same lock.
-- A hold whose id is already there is placed (a retry after a reply that was lost). The room is
-- what the leases leave (gateway_available); the key's day also counts what its key leases
-- reserve, and the holds in them not again (gateway_key_day_used).
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
