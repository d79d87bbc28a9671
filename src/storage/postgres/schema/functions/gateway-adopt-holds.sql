-- Journaled holds (their rows as holds_to_row writes them, in a JSON array) become ordinary
-- holds: counted on their own, recovered when they expire or their owner is dead. One whose
-- receipt is there (settled, its journal entry not yet removed) or whose row is there is skipped.
CREATE OR REPLACE FUNCTION gateway_adopt_holds(p_holds jsonb) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO holds (id, request_id, account_id, key_id, key_prefix, endpoint, stream, requested_model,
                     amount_nano, day, month, created_at, owner, expires_at, estimated_cost_nano)
  SELECT x.id, x.request_id, x.account_id, x.key_id, x.key_prefix, x.endpoint, x.stream, x.requested_model,
         x.amount_nano, x.day, x.month, x.created_at, x.owner, x.expires_at, coalesce(x.estimated_cost_nano, 0)
  FROM jsonb_to_recordset(p_holds) AS x(id text, request_id text, account_id text, key_id text, key_prefix text,
       endpoint text, stream boolean, requested_model text, amount_nano bigint, day text, month text,
       created_at timestamptz, owner text, expires_at timestamptz, estimated_cost_nano bigint)
  WHERE NOT EXISTS (SELECT 1 FROM receipts r WHERE r.id = x.id)
  ON CONFLICT (id) DO NOTHING
$$;
