-- What a new hold may use, with the account row locked by the caller: the balance less the holds
-- outside leases and what the leases take; the month's figure likewise.
CREATE OR REPLACE FUNCTION gateway_available(p_account_id text, p_month text, OUT available_nano bigint, OUT month_used_nano bigint)
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
