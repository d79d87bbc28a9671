-- What a key's UTC day has used: its charges, its holds outside its key leases, and what its key
-- leases still reserve. p_except: a lease left out (the one being renewed, which counts its own).
CREATE OR REPLACE FUNCTION gateway_key_day_used(p_account_id text, p_key_id text, p_day text, p_except text) RETURNS bigint
LANGUAGE sql AS $$
  SELECT coalesce((SELECT s.charged_nano FROM key_daily_spend s WHERE s.key_id = p_key_id AND s.day = p_day), 0)
    + (SELECT coalesce(sum(h.amount_nano), 0) FROM holds h
       WHERE h.account_id = p_account_id AND h.key_id = p_key_id AND h.day = p_day
         AND (h.lease_id IS NULL OR NOT EXISTS (SELECT 1 FROM balance_leases k WHERE k.id = h.lease_id AND k.key_id IS NOT NULL)))
    + (SELECT coalesce(sum(greatest(k.granted_nano - k.charged_nano, 0)), 0) FROM balance_leases k
       WHERE k.key_id = p_key_id AND k.day = p_day AND k.id IS DISTINCT FROM p_except)
$$;
