import { formatUsd, MAX_BALANCE_NANO, parseUsd } from '../lib/money.ts';
import { DEFAULT_ACCOUNT_ID } from '../storage/store.ts';
import { CliError } from './cli-error.ts';
import { report, type CommandContext } from './command-context.ts';
import { displayUsd } from './format.ts';

function parseAmount(command: string, text: string | undefined): number {
  try {
    return parseUsd(text!);
  } catch (error) {
    throw new CliError(`${command}: ${(error as Error).message}`);
  }
}

export async function addFunds(context: CommandContext): Promise<void> {
  const nano = parseAmount('funds add', context.args[0]);
  if (nano <= 0) throw new CliError('funds add: the amount must be more than 0');
  if ((await context.store.getBalance(DEFAULT_ACCOUNT_ID)) + nano > MAX_BALANCE_NANO) {
    throw new CliError(`funds add: the balance may not pass ${formatUsd(MAX_BALANCE_NANO)} USD`);
  }
  const balance = await context.store.addFunds(DEFAULT_ACCOUNT_ID, nano, 'cli', context.options.note);
  report(context, { added: formatUsd(nano), balance: formatUsd(balance) }, () => `Added ${displayUsd(nano)}. Balance: ${displayUsd(balance)}.`);
}

export async function showFunds(context: CommandContext): Promise<void> {
  const balance = await context.store.getBalance(DEFAULT_ACCOUNT_ID);
  const totals = await context.store.ledgerTotals(DEFAULT_ACCOUNT_ID);
  report(
    context,
    { balance: formatUsd(balance), funds_added: formatUsd(totals.funds), charged: formatUsd(totals.charges) },
    () => `Balance: ${displayUsd(balance)} (added ${displayUsd(totals.funds)}, charged ${displayUsd(totals.charges)})`,
  );
}

/** `budget set <usd>`: the account's monthly budget (charges plus holds per UTC month). */
export async function setBudget(context: CommandContext): Promise<void> {
  const nano = parseAmount('budget set', context.args[0]);
  await context.store.setMonthlyBudget(DEFAULT_ACCOUNT_ID, nano, 'cli');
  report(context, { monthly_budget: formatUsd(nano) }, () => `Monthly budget set to ${displayUsd(nano)}.`);
}

export async function clearBudget(context: CommandContext): Promise<void> {
  await context.store.setMonthlyBudget(DEFAULT_ACCOUNT_ID, null, 'cli');
  report(context, { monthly_budget: null }, () => 'Monthly budget removed.');
}

export async function showBudget(context: CommandContext): Promise<void> {
  const month = context.now.toISOString().slice(0, 7);
  const summary = await context.store.accountSummary(DEFAULT_ACCOUNT_ID, month);
  const budget = summary.monthlyBudgetNano;
  report(
    context,
    {
      month,
      monthly_budget: budget === null ? null : formatUsd(budget),
      spend: formatUsd(summary.monthChargedNano),
      held: formatUsd(summary.monthHeldNano),
    },
    () =>
      `${month}: spent ${displayUsd(summary.monthChargedNano)}, held ${displayUsd(summary.monthHeldNano)}, budget ${budget === null ? 'none' : displayUsd(budget)}`,
  );
}
