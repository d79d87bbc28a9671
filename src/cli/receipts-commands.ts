import { renderReceipt } from '../http/render-receipt.ts';
import { formatUsd } from '../lib/money.ts';
import type { ReceiptCursor, ReceiptFilter, ReceiptRecord } from '../storage/records.ts';
import { DEFAULT_ACCOUNT_ID } from '../storage/store.ts';
import type { CommandContext } from './command-context.ts';
import { formatCsv, formatTable } from './format.ts';
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

const tokens = (receipt: ReceiptRecord) => [receipt.usage?.inputTokens ?? 0, receipt.usage?.outputTokens ?? 0] as const;

/** `gateway receipts`: newest first, filtered; a table, --json (the API's receipt objects) or --csv. */
export async function listReceipts(context: CommandContext): Promise<void> {
  const format = outputFormat(context);
  const limit = parseCount('limit', context.options.limit, 20, 1, MOST);
  const receipts = await readReceipts(context, await receiptFilter(context), limit);
  if (format === 'json') return context.print(JSON.stringify(receipts.map(renderReceipt), null, 2));
  if (format === 'csv') {
    const header = [
      'id',
      'created_at',
      'key_prefix',
      'requested_model',
      'model',
      'status',
      'cost_usd',
      'input_tokens',
      'output_tokens',
      'error_code',
    ];
    return context.print(
      formatCsv(
        header,
        receipts.map((receipt) => [
          receipt.id,
          receipt.createdAt,
          receipt.keyPrefix,
          receipt.requestedModel,
          receipt.answeringModel,
          receipt.status,
          formatUsd(receipt.costNano),
          ...tokens(receipt),
          receipt.errorCode,
        ]),
      ),
    );
  }
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
