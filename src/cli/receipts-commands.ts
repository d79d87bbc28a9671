import { renderReceipt } from '../http/render-receipt.ts';
import { formatUsd } from '../lib/money.ts';
import type { ReceiptCursor, ReceiptFilter, ReceiptRecord } from '../storage/records.ts';
import { DEFAULT_ACCOUNT_ID } from '../storage/store.ts';
import type { CommandContext } from './command-context.ts';
import { csvLine, matchingReceipts, RECEIPT_CSV_HEADER, receiptCsvFields } from '../http/receipts-export.ts';
import { formatTable } from './format.ts';
import { findKey, outputFormat, parseCount, parseStatus, parseWhen } from './report-options.ts';

const PAGE = 100;
const MOST = 100_000;

/** The filter of `receipts` and `usage` from --key, --model, --status, --since, --until. */
async function receiptFilter(context: CommandContext): Promise<ReceiptFilter> {
  const { options, now } = context;
  const filter: ReceiptFilter = {};
  if (options.key !== undefined) filter.keyId = (await findKey(context, options.key)).id;
  if (options.model !== undefined) filter.model = options.model;
  const status = parseStatus(options.status);
  if (status) filter.status = status;
  const from = parseWhen('since', options.since, now);
  if (from) filter.from = from;
  const to = parseWhen('until', options.until, now);
  if (to) filter.to = to;
  return filter;
}

/** Newest first, up to `limit`, page by page. */
async function readReceipts(context: CommandContext, filter: ReceiptFilter, limit: number): Promise<ReceiptRecord[]> {
  const receipts: ReceiptRecord[] = [];
  let cursor: ReceiptCursor | undefined;
  for (;;) {
    const page = await context.store.searchReceipts(DEFAULT_ACCOUNT_ID, { limit: Math.min(PAGE, limit - receipts.length), cursor, filter });
    receipts.push(...page.data);
    if (!page.hasMore || receipts.length >= limit) return receipts;
    cursor = { createdAt: receipts[receipts.length - 1]!.createdAt };
  }
}

/**
 * `receipts --csv`: the console's export, the whole filtered set (or --limit rows) printed a page at
 * a time as it is read, so any number of receipts goes out without being held in memory.
 */
async function exportCsv(context: CommandContext): Promise<void> {
  const limit = context.options.limit === undefined ? Number.POSITIVE_INFINITY : parseCount('limit', context.options.limit, 20, 1, MOST);
  let left = limit;
  context.print(csvLine(RECEIPT_CSV_HEADER).trimEnd());
  for await (const page of matchingReceipts(context.store, DEFAULT_ACCOUNT_ID, await receiptFilter(context), PAGE)) {
    const rows = page.slice(0, left);
    left -= rows.length;
    if (rows.length)
      context.print(
        rows
          .map((receipt) => csvLine(receiptCsvFields(receipt)))
          .join('')
          .trimEnd(),
      );
    if (left <= 0) return;
  }
}

const tokens = (receipt: ReceiptRecord) => [receipt.usage?.inputTokens ?? 0, receipt.usage?.outputTokens ?? 0] as const;

/** `gateway receipts`: newest first, filtered; a table, --json (the API's receipt objects) or --csv. */
export async function listReceipts(context: CommandContext): Promise<void> {
  const format = outputFormat(context);
  if (format === 'csv') return exportCsv(context);
  const limit = parseCount('limit', context.options.limit, 20, 1, MOST);
  const receipts = await readReceipts(context, await receiptFilter(context), limit);
  if (format === 'json') return context.print(JSON.stringify(receipts.map(renderReceipt), null, 2));
  if (!receipts.length) return context.print('No receipts match.');
  const rows = receipts.map((receipt) => [
    receipt.id,
    `${receipt.createdAt.slice(0, 10)} ${receipt.createdAt.slice(11, 19)}Z`,
    receipt.keyPrefix,
    receipt.requestedModel ?? '-',
    receipt.answeringModel ?? '-',
    receipt.errorCode ? `${receipt.status} (${receipt.errorCode})` : receipt.status,
    formatUsd(receipt.costNano),
    ...tokens(receipt).map(String),
  ]);
  context.print(formatTable(['ID', 'TIME (UTC)', 'KEY', 'REQUESTED', 'MODEL', 'STATUS', 'COST (USD)', 'IN', 'OUT'], rows));
}
