import type { ReceiptCursor, ReceiptFilter, SpendBucket, UsageRow, UsageSeriesRow, ReceiptRecord } from './records.ts';

/** A page of receipts, newest first. */
export interface ReceiptPage {
  data: ReceiptRecord[];
  hasMore: boolean;
}

/** Receipts as the API and the console read them, and the reports made from them. */
export interface ReceiptStore {
  getReceipt(accountId: string, id: string): Promise<ReceiptRecord | null>;
  /**
   * Newest first by createdAt, each receipt's own (unique within the account); `before` is an
   * ISO instant with up to nine fractional digits, exclusive: the createdAt of a page's last
   * receipt continues with the next one, ties impossible.
   */
  listReceipts(accountId: string, options: { limit: number; before?: string }): Promise<ReceiptPage>;
  /** Newest first as listReceipts, for the console: `cursor` continues strictly older, `filter` ANDs its fields. */
  searchReceipts(accountId: string, options: { limit: number; cursor?: ReceiptCursor; filter?: ReceiptFilter }): Promise<ReceiptPage>;
  /** Cost, requests and failed requests per UTC hour or day with created_at in [from, to), oldest first; empty buckets left out. */
  spendSeries(accountId: string, options: { from: string; to: string; bucket: 'hour' | 'day' }): Promise<SpendBucket[]>;
  /** Per answering model (else the requested one), per key id or per UTC day (2026-11-21), over [from, to); most requests first. */
  usageBy(accountId: string, options: { from: string; to: string; by: 'model' | 'key' | 'day' }): Promise<UsageRow[]>;
  /**
   * Usage per UTC hour or day over [from, to), per group: the whole account (name "account"), each
   * key id, or each model (answering, else requested; a failed attempt counts for its own model).
   * `keyId` narrows to one key's receipts. Oldest bucket first, then by name; empty ones left out.
   */
  usageSeries(accountId: string, options: UsageSeriesQuery): Promise<UsageSeriesRow[]>;
}

export interface UsageSeriesQuery {
  from: string;
  to: string;
  bucket: 'hour' | 'day';
  by: 'account' | 'key' | 'model';
  keyId?: string;
}
