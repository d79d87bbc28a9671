import type { AliasRule, ApiKeyRecord, FixQuoteRecord, FixRunEvent, FixRunRecord, HoldRecord, ReceiptRecord } from '../records.ts';
import {
  aliasRuleFromRow,
  type AliasRuleRow,
  aliasRuleToRow,
  apiKeyFromRow,
  type ApiKeyRow,
  apiKeyToRow,
  auditFromRow,
  type AuditRow,
  fixQuoteFromRow,
  type FixQuoteRow,
  fixQuoteToRow,
  fixRunEventFromRow,
  type FixRunEventRow,
  fixRunEventToRow,
  fixRunFromRow,
  type FixRunRow,
  fixRunToRow,
  holdFromRow,
  type HoldRow,
  holdToRow,
  receiptFromRow,
  type ReceiptRow,
  receiptToRow,
} from '../row-mapping.ts';

/** A normalised row (../row-mapping.ts) as SQLite holds it: the `Json` columns as JSON text, the `Flag` columns as 0/1. */
export type SqliteRow<Row, Json extends keyof Row = never, Flag extends keyof Row = never> = {
  [Column in keyof Row]: Column extends Json ? (null extends Row[Column] ? string | null : string) : Column extends Flag ? number : Row[Column];
};

interface SqliteColumns<Row, Json extends keyof Row, Flag extends keyof Row> {
  toSqlite(row: Row): SqliteRow<Row, Json, Flag>;
  fromSqlite(stored: SqliteRow<Row, Json, Flag>): Row;
}

/** The conversion of one table's rows, given which of its columns SQLite keeps as JSON text and which as 0/1. */
function columns<Row>() {
  return <Json extends keyof Row = never, Flag extends keyof Row = never>(
    json: readonly Json[],
    flags: readonly Flag[] = [],
  ): SqliteColumns<Row, Json, Flag> => ({
    toSqlite(row) {
      const stored = { ...row } as Record<PropertyKey, unknown>;
      for (const column of json) stored[column] = row[column] === null || row[column] === undefined ? null : JSON.stringify(row[column]);
      for (const column of flags) stored[column] = row[column] ? 1 : 0;
      return stored as SqliteRow<Row, Json, Flag>;
    },
    fromSqlite(stored) {
      const row = { ...stored } as Record<PropertyKey, unknown>;
      for (const column of json) row[column] = stored[column] === null ? null : JSON.parse(stored[column] as string);
      for (const column of flags) row[column] = stored[column] === 1;
      return row as Row;
    },
  });
}

const apiKeys = columns<ApiKeyRow>()(['scopes', 'models']);
const receipts = columns<ReceiptRow>()(['attempts', 'warnings', 'usage', 'prices'], ['stream', 'usage_estimated']);
const holds = columns<HoldRow>()([], ['stream']);
const auditEntries = columns<AuditRow>()(['detail']);
const fixQuotes = columns<FixQuoteRow>()(['input']);
const fixRuns = columns<FixRunRow>()(['result'], ['cancel_requested']);
const fixRunEvents = columns<FixRunEventRow>()(['data']);
const aliasRules = columns<AliasRuleRow>()(['candidates']);

export type SqliteApiKeyRow = ReturnType<typeof apiKeys.toSqlite>;
export type SqliteReceiptRow = ReturnType<typeof receipts.toSqlite>;
export type SqliteHoldRow = ReturnType<typeof holds.toSqlite>;
export type SqliteAuditRow = ReturnType<typeof auditEntries.toSqlite>;
export type SqliteFixQuoteRow = ReturnType<typeof fixQuotes.toSqlite>;
export type SqliteFixRunRow = ReturnType<typeof fixRuns.toSqlite>;
export type SqliteFixRunEventRow = ReturnType<typeof fixRunEvents.toSqlite>;
/** Alias rules are kept per account; the account is a column of the table, not of the rule. */
export type SqliteAliasRuleRow = ReturnType<typeof aliasRules.toSqlite> & { account_id: string };

export const apiKeyToSqlite = (key: ApiKeyRecord) => apiKeys.toSqlite(apiKeyToRow(key));
export const apiKeyFromSqlite = (row: SqliteApiKeyRow) => apiKeyFromRow(apiKeys.fromSqlite(row));
export const receiptToSqlite = (receipt: ReceiptRecord) => receipts.toSqlite(receiptToRow(receipt));
export const receiptFromSqlite = (row: SqliteReceiptRow) => receiptFromRow(receipts.fromSqlite(row));
export const holdToSqlite = (hold: HoldRecord) => holds.toSqlite(holdToRow(hold));
export const holdFromSqlite = (row: SqliteHoldRow) => holdFromRow(holds.fromSqlite(row));
export const auditFromSqlite = (row: SqliteAuditRow) => auditFromRow(auditEntries.fromSqlite(row));
export const fixQuoteToSqlite = (quote: FixQuoteRecord) => fixQuotes.toSqlite(fixQuoteToRow(quote));
export const fixQuoteFromSqlite = (row: SqliteFixQuoteRow) => fixQuoteFromRow(fixQuotes.fromSqlite(row));
export const fixRunToSqlite = (run: FixRunRecord) => fixRuns.toSqlite(fixRunToRow(run));
export const fixRunFromSqlite = (row: SqliteFixRunRow) => fixRunFromRow(fixRuns.fromSqlite(row));
export const fixRunEventToSqlite = (event: FixRunEvent) => fixRunEvents.toSqlite(fixRunEventToRow(event));
export const fixRunEventFromSqlite = (row: SqliteFixRunEventRow) => fixRunEventFromRow(fixRunEvents.fromSqlite(row));
export const aliasRuleToSqlite = (accountId: string, rule: AliasRule): SqliteAliasRuleRow => ({
  account_id: accountId,
  ...aliasRules.toSqlite(aliasRuleToRow(rule)),
});
export const aliasRuleFromSqlite = (row: SqliteAliasRuleRow) => aliasRuleFromRow(aliasRules.fromSqlite(row));
