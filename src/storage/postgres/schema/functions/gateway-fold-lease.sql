-- Folds a lease's charges into its account (balance and month's spend); the caller holds the
-- lease row, then the account row (every writer takes leases before accounts).
CREATE OR REPLACE FUNCTION gateway_fold_lease(p_lease balance_leases) RETURNS void
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
