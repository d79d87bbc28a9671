-- Releases a lease whose owner is gone (expired, or the owner known dead), re-checked under its
-- row lock: its charges folded, its holds left as ordinary holds (counted on their own from now
-- on, and recovered as such), the holds journaled in it outside the database (p_journaled)
-- adopted likewise, the lease deleted. False when it is not such a lease (any more).
CREATE OR REPLACE FUNCTION gateway_release_lease(p_lease_id text, p_now timestamptz, p_dead_owners text[], p_journaled jsonb DEFAULT '[]')
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  v_lease balance_leases;
BEGIN
  SELECT * INTO v_lease FROM balance_leases l
    WHERE l.id = p_lease_id AND (l.expires_at < p_now OR l.owner = ANY(p_dead_owners)) FOR UPDATE;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  PERFORM 1 FROM accounts WHERE id = v_lease.account_id FOR NO KEY UPDATE;
  PERFORM gateway_fold_lease(v_lease);
  UPDATE holds SET lease_id = NULL WHERE lease_id = p_lease_id;
  PERFORM gateway_adopt_holds(p_journaled);
  DELETE FROM balance_leases WHERE id = p_lease_id;
  RETURN true;
END
$$;
