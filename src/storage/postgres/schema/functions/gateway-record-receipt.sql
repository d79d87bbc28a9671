-- One settlement alone (a batch of one, a write of a failed batch run again, a settlement inside a
-- transaction): what gateway_apply_batch does for one receipt, in fewer statements. p_op is the
-- settlement as an element of a batch: the receipt's columns, touch_key, and lease_id (null
-- outside a balance lease). The receipt (gateway_insert_receipt), then its charge: to its lease's
-- charged total, or, outside a lease or with the lease gone (released while this process
-- stalled), to the balance and the account's month; and to the key's day. Lock order, as a batch:
-- the receipt's index entries, the lease row, then (only without the lease) the account row, then
-- the key's day; every writer takes receipts' index entries before those rows, so no two wait
-- for each other in a circle. Two copies of one settlement charge once: the second meets the
-- first on the receipts' primary key and writes nothing.
CREATE OR REPLACE FUNCTION gateway_record_receipt(p_op jsonb) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  v_receipt receipts := jsonb_populate_record(NULL::receipts, p_op);
  v record;
BEGIN
  SELECT * INTO v FROM gateway_insert_receipt(v_receipt, (p_op->>'touch_key')::boolean);
  -- Already there: it was charged when it was written.
  IF v.inserted AND v_receipt.cost_nano > 0 THEN
    -- No row without a lease_id.
    UPDATE balance_leases SET charged_nano = charged_nano + v_receipt.cost_nano WHERE id = p_op->>'lease_id';
    IF NOT FOUND THEN
      UPDATE accounts SET balance_nano = balance_nano - v_receipt.cost_nano WHERE id = v_receipt.account_id;
      INSERT INTO account_monthly_spend AS s (account_id, month, charged_nano)
      VALUES (v_receipt.account_id, v.month, v_receipt.cost_nano)
      ON CONFLICT (account_id, month) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
    END IF;
    INSERT INTO key_daily_spend AS s (key_id, day, account_id, charged_nano)
    VALUES (v_receipt.key_id, v.day, v_receipt.account_id, v_receipt.cost_nano)
    ON CONFLICT (key_id, day) DO UPDATE SET charged_nano = s.charged_nano + EXCLUDED.charged_nano;
  END IF;
  RETURN v.created_ns;
END
$$;
