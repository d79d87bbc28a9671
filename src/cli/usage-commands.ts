import { formatUsd } from '../lib/money.ts';
import type { UsageRow } from '../storage/records.ts';
import { DEFAULT_ACCOUNT_ID } from '../storage/store.ts';
import { CliError } from './cli-error.ts';
import type { CommandContext } from './command-context.ts';
import { formatCsv, formatTable } from './format.ts';
import { didYouMean, outputFormat, parseWhen } from './report-options.ts';

const GROUPS = ['key', 'model', 'day'] as const;
type Group = (typeof GROUPS)[number];

function parseGroup(text: string | undefined): Group {
  if (text === undefined) return 'key';
  if (GROUPS.includes(text as Group)) return text as Group;
  throw new CliError(`--by must be one of: ${GROUPS.join(', ')}; got "${text}"${didYouMean(text, GROUPS)}`);
}

/** `gateway usage`: spend, requests, errors and tokens per key, model or UTC day, from the receipts. */
export async function showUsage(context: CommandContext): Promise<void> {
  const { options, now } = context;
  const format = outputFormat(context);
  const by = parseGroup(options.by);
  const from = parseWhen('since', options.since ?? '30d', now)!;
  const to = parseWhen('until', options.until, now) ?? new Date(now.getTime() + 1).toISOString();
  if (Date.parse(from) >= Date.parse(to)) throw new CliError(`--since (${from}) must be before --until (${to})`);
  const rows: UsageRow[] = await context.store.usageBy(DEFAULT_ACCOUNT_ID, { from, to, by });
  if (by === 'day') rows.sort((a, b) => (a.name < b.name ? -1 : 1));
  const keys = by === 'key' ? new Map((await context.store.listKeys(DEFAULT_ACCOUNT_ID)).map((key) => [key.id, key])) : new Map();
  const label = (row: UsageRow) => (by === 'key' ? (keys.get(row.name)?.prefix ?? '-') : row.name);

  if (format === 'json') {
    const data = rows.map((row) => ({
      [by]: row.name,
      ...(by === 'key' ? { prefix: keys.get(row.name)?.prefix ?? null, name: keys.get(row.name)?.name ?? null } : {}),
      requests: row.requests,
      errors: row.errors,
      input_tokens: row.inputTokens,
      output_tokens: row.outputTokens,
      cost: formatUsd(row.costNano),
    }));
    return context.print(JSON.stringify({ by, since: from, until: to, data }, null, 2));
  }
  const header = by === 'key' ? ['key', 'prefix', 'name'] : [by];
  const groupCells = (row: UsageRow) => (by === 'key' ? [row.name, label(row), keys.get(row.name)?.name ?? ''] : [row.name]);
  if (format === 'csv') {
    return context.print(
      formatCsv(
        [...header, 'requests', 'errors', 'input_tokens', 'output_tokens', 'cost_usd'],
        rows.map((row) => [...groupCells(row), row.requests, row.errors, row.inputTokens, row.outputTokens, formatUsd(row.costNano)]),
      ),
    );
  }
  const range = `${from.slice(0, 16)}Z to ${to.slice(0, 16)}Z`;
  if (!rows.length) return context.print(`No requests from ${range}.`);
  const total = rows.reduce(
    (sum, row) => ({
      requests: sum.requests + row.requests,
      errors: sum.errors + row.errors,
      input: sum.input + row.inputTokens,
      output: sum.output + row.outputTokens,
      cost: sum.cost + row.costNano,
    }),
    { requests: 0, errors: 0, input: 0, output: 0, cost: 0 },
  );
  const cells = rows.map((row) => [
    ...groupCells(row),
    String(row.requests),
    String(row.errors),
    String(row.inputTokens),
    String(row.outputTokens),
    formatUsd(row.costNano),
  ]);
  const totalCells = [
    ...header.map((_, index) => (index === 0 ? 'TOTAL' : '')),
    ...[total.requests, total.errors, total.input, total.output].map(String),
  ];
  totalCells.push(formatUsd(total.cost));
  const titles = [...header.map((title) => title.toUpperCase()), 'REQUESTS', 'ERRORS', 'IN TOKENS', 'OUT TOKENS', 'COST (USD)'];
  context.print(`Usage by ${by}, ${range}\n${formatTable(titles, [...cells, totalCells])}`);
}
