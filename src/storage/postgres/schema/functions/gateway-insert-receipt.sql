-- The receipt alone: written unless its id is there already, its hold released, the key's last
-- use moved; no charge (gateway_record_receipt and gateway_apply_batch charge it). Its created_ns
-- is the value asked for: it is written at the first free one from there in its millisecond.
-- Returns the receipt's created_ns, whether this call wrote it, and the UTC day and month its
-- cost counts against (its hold's, else its own). A receipt sent again is not looked for before
-- the insert: it meets its first copy on the primary key, and only then is it told apart from a
-- created_ns taken meanwhile.
-- The last receipt of a millisecond is asked for in the order of receipts_by_account_created,
-- newest first: only that index answers it without sorting, so it is the one planned at any size
-- (max(created_ns), planned while receipts was nearly empty, could read receipts_by_key_created,
-- whose key_id comes between account_id and created_ns: every receipt of the account read for
-- each settlement, 4.5 ms each at 100,000 receipts against 0.03 ms).
CREATE OR REPLACE FUNCTION gateway_insert_receipt(p_receipt receipts, p_touch_key boolean)
RETURNS TABLE (created_ns bigint, inserted boolean, day text, month text)
LANGUAGE plpgsql AS $$
DECLARE
  v_from bigint := p_receipt.created_ns;
  v_existing bigint;
  v_day text;
  v_month text;
BEGIN
  LOOP
    -- Above every value taken from v_from to the end of its millisecond, as committed when this statement starts.
    p_receipt.created_ns := coalesce((SELECT r.created_ns + 1 FROM receipts r
      WHERE r.account_id = p_receipt.account_id AND r.created_ns >= v_from
        AND r.created_ns < v_from - (v_from % 1000000 + 1000000) % 1000000 + 1000000
      ORDER BY r.account_id DESC, r.created_ns DESC LIMIT 1), v_from);
    INSERT INTO receipts VALUES (p_receipt.*) ON CONFLICT DO NOTHING;
    EXIT WHEN FOUND;
    -- Its id is there (a settlement sent again, or a copy that committed meanwhile): that one stands.
    SELECT r.created_ns INTO v_existing FROM receipts r WHERE r.id = p_receipt.id;
    IF FOUND THEN
      DELETE FROM holds WHERE id = p_receipt.id;
      RETURN QUERY SELECT v_existing, false, NULL::text, NULL::text;
      RETURN;
    END IF;
    -- Its created_ns taken by a settlement that committed while this one waited, as others waiting
    -- may find too: look again from a little past it, at random, so they do not all want the next one.
    v_from := p_receipt.created_ns + 1 + floor(random() * 64)::bigint;
  END LOOP;
  DELETE FROM holds h WHERE h.id = p_receipt.id RETURNING h.day, h.month INTO v_day, v_month;
  -- Never move backwards: a long stream can finish after a later request's receipt.
  IF p_touch_key THEN
    UPDATE api_keys SET last_used_at = p_receipt.created_at
    WHERE id = p_receipt.key_id AND (last_used_at IS NULL OR last_used_at < p_receipt.created_at);
  END IF;
  -- Without its hold (recovered, or never placed) a cost counts on the receipt's UTC day.
  RETURN QUERY SELECT p_receipt.created_ns, true,
    coalesce(v_day, to_char(p_receipt.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')),
    coalesce(v_month, to_char(p_receipt.created_at AT TIME ZONE 'UTC', 'YYYY-MM'));
END
$$;
