-- gateway_insert_receipt takes a receipts row and gateway_record_receipt a batch's element, not
-- one parameter a column; gateway_record_receipt settles in a lease too, in place of
-- gateway_record_lease_receipt. The old signatures go here; functions/ makes the new ones.
DROP FUNCTION IF EXISTS gateway_insert_receipt(text, text, text, text, text, timestamptz, text, text, boolean, text, text, jsonb, jsonb,
  boolean, jsonb, bigint, bigint, double precision, double precision, text, boolean, jsonb, bigint);
DROP FUNCTION IF EXISTS gateway_record_receipt(text, text, text, text, text, timestamptz, text, text, boolean, text, text, jsonb, jsonb,
  boolean, jsonb, bigint, bigint, double precision, double precision, text, boolean, jsonb, bigint);
DROP FUNCTION IF EXISTS gateway_record_lease_receipt(text, text, text, text, text, timestamptz, text, text, boolean, text, text, jsonb, jsonb,
  boolean, jsonb, bigint, bigint, double precision, double precision, text, boolean, jsonb, bigint, text);
