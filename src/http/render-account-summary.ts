import { formatUsd } from '../lib/money.ts';
import type { AccountSummary } from '../storage/records.ts';
import type { AccountSummaryView } from './account-schema.ts';

/** The account's money in USD strings: balance, available, holds and the month against its budget (GET /v1/balance and the console). */
export function renderAccountSummary(summary: AccountSummary): AccountSummaryView {
  const monthUsed = summary.monthChargedNano + summary.monthHeldNano;
  return {
    balance: formatUsd(summary.balanceNano),
    available: formatUsd(summary.balanceNano - summary.heldNano),
    holds: { count: summary.holdCount, total: formatUsd(summary.heldNano) },
    month: {
      period: summary.month,
      spend: formatUsd(summary.monthChargedNano),
      held: formatUsd(summary.monthHeldNano),
      budget: summary.monthlyBudgetNano === null ? null : formatUsd(summary.monthlyBudgetNano),
      remaining: summary.monthlyBudgetNano === null ? null : formatUsd(Math.max(0, summary.monthlyBudgetNano - monthUsed)),
    },
  };
}
