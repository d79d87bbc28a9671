/**
 * One mapping between records and table rows for every backend. A row here is normalised:
 * snake_case columns, JSON values parsed, booleans real, instants as ISO strings, money as safe
 * integers. PostgreSQL's type parsers hand rows over in this form already (postgres-pool.ts);
 * SQLite keeps JSON as text and booleans as 0/1, and sqlite/sqlite-rows.ts converts its rows
 * to and from this form, so the mapping itself is written once.
 */
export * from './rows/ledger-rows.ts';
export * from './rows/fix-rows.ts';
export * from './rows/console-rows.ts';
