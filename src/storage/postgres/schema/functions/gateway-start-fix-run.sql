-- Starts a fix run and places its hold in one statement. The run first, then its hold: a second
-- start of the quote waits on the first's uncommitted row in the unique index, then inserts
-- nothing and gets the run's id back. A refused hold deletes the run just inserted, so nothing is
-- left. The hold is placed by gateway_place_hold itself (account row lock, checks, insert), with
-- the estimated cost its recovery charges.
CREATE OR REPLACE FUNCTION gateway_start_fix_run(
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
