-- Takes, tops up, renews or shrinks a lease (p_lease_id null: a new one, id p_new_id): folds its
-- charges, then makes its reservation p_target when the account can spare 16 times that (balance
-- and budget, besides this lease; for a key lease, p_key_id given, the key's day too), else keeps
-- at most p_keep (what its live holds use) of what it had. Returns the lease (null when none was
-- taken, or it is gone: recovered) with its granted and charged totals.
CREATE OR REPLACE FUNCTION gateway_renew_lease(
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
