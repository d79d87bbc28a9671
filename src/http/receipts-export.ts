import { formatUsd } from '../lib/money.ts';
import type { ReceiptCursor, ReceiptFilter, ReceiptRecord } from '../storage/records.ts';
import type { ReceiptStore } from '../storage/receipt-store.ts';
import { renderReceipt } from './render-receipt.ts';

/** The receipts export of the console and of `gateway receipts --csv`: one row per receipt, money as exact USD strings. */
export const RECEIPT_CSV_HEADER = [
  'id',
  'request_id',
  'created_at',
  'key_id',
  'key_prefix',
  'endpoint',
  'requested_model',
  'model',
  'status',
  'error_code',
  'cost_usd',
  'hold_usd',
  'input_tokens',
  'cached_input_tokens',
  'output_tokens',
  'reasoning_tokens',
  'latency_ms',
  'time_to_first_token_ms',
  'attempts',
] as const;

/** One CSV field: quoted when it holds a comma, a quote or a line break, its quotes doubled (RFC 4180). */
function csvField(value: string | number | null): string {
  const text = value === null ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvLine(fields: ReadonlyArray<string | number | null>): string {
  return `${fields.map(csvField).join(',')}\n`;
}

/** A receipt's CSV fields in RECEIPT_CSV_HEADER's order; attempts as "model:outcome[:code]" joined by " > ". */
export function receiptCsvFields(receipt: ReceiptRecord): Array<string | number | null> {
  return [
    receipt.id,
    receipt.requestId,
    receipt.createdAt,
    receipt.keyId,
    receipt.keyPrefix,
    receipt.endpoint,
    receipt.requestedModel,
    receipt.answeringModel,
    receipt.status,
    receipt.errorCode,
    formatUsd(receipt.costNano),
    formatUsd(receipt.holdNano),
    receipt.usage?.inputTokens ?? 0,
    receipt.usage?.cachedInputTokens ?? 0,
    receipt.usage?.outputTokens ?? 0,
    receipt.usage?.reasoningTokens ?? 0,
    receipt.latencyMs,
    receipt.timeToFirstTokenMs,
    receipt.attempts.map((attempt) => [attempt.model, attempt.outcome, ...(attempt.errorCode ? [attempt.errorCode] : [])].join(':')).join(' > '),
  ];
}

/** Every receipt matching `filter`, newest first, a page at a time: the whole set without holding it in memory. */
export async function* matchingReceipts(
  store: Pick<ReceiptStore, 'searchReceipts'>,
  accountId: string,
  filter: ReceiptFilter,
  pageSize = 500,
): AsyncGenerator<ReceiptRecord[]> {
  let cursor: ReceiptCursor | undefined;
  for (;;) {
    const page = await store.searchReceipts(accountId, { limit: pageSize, cursor, filter });
    if (page.data.length) yield page.data;
    if (!page.hasMore) return;
    cursor = { createdAt: page.data.at(-1)!.createdAt };
  }
}

/** The export as text chunks: CSV with a header row, or a JSON array of the API's receipt objects. */
export async function* exportReceipts(pages: AsyncIterable<ReceiptRecord[]>, format: 'csv' | 'json'): AsyncGenerator<string> {
  if (format === 'csv') yield csvLine(RECEIPT_CSV_HEADER);
  else yield '[';
  let first = true;
  for await (const page of pages) {
    if (format === 'csv') yield page.map((receipt) => csvLine(receiptCsvFields(receipt))).join('');
    else {
      yield page.map((receipt, index) => `${first && index === 0 ? '\n' : ',\n'}${JSON.stringify(renderReceipt(receipt))}`).join('');
      first = false;
    }
  }
  if (format === 'json') yield first ? ']\n' : '\n]\n';
}
