-- What an account's leases take: from the balance (charges not yet folded) and from what holds
-- may use (reservations not yet charged), in all and for one month.
CREATE OR REPLACE FUNCTION gateway_lease_totals(p_account_id text, p_month text,
  OUT unfolded_nano bigint, OUT reserved_nano bigint, OUT month_unfolded_nano bigint, OUT month_reserved_nano bigint)
LANGUAGE sql AS $$
  SELECT coalesce(sum(l.charged_nano - l.folded_nano), 0)::bigint,
         coalesce(sum(greatest(l.granted_nano - l.charged_nano, 0)), 0)::bigint,
         coalesce(sum(l.charged_nano - l.folded_nano) FILTER (WHERE l.month = p_month), 0)::bigint,
         coalesce(sum(greatest(l.granted_nano - l.charged_nano, 0)) FILTER (WHERE l.month = p_month), 0)::bigint
  FROM balance_leases l WHERE l.account_id = p_account_id
$$;
