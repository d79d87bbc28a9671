import type { AccountSummary } from '../storage/records.ts';
import type { Store } from '../storage/store.ts';

/** The alert thresholds set on the Limits page; null turns that alert off. */
export interface AlertSettings {
  /** Alert when the available balance (balance minus holds) is below this, nano-USD. */
  balanceBelowNano: number | null;
  /** Alert when the month's spend plus holds passes this percentage of the monthly budget. */
  budgetSharePercent: number | null;
}

export type AlertKind = 'balance_low' | 'budget_share';

export interface ActiveAlert {
  kind: AlertKind;
  /** Nano-USD: the threshold crossed (balance_low) or the budget share's amount (budget_share). */
  thresholdNano: number;
  /** Nano-USD: the available balance, or the month's spend plus holds. */
  valueNano: number;
}

export const ALERTS_ACTION = 'alerts.set';
export const NO_ALERTS: AlertSettings = { balanceBelowNano: null, budgetSharePercent: null };

/**
 * The settings in force: those of the newest `alerts.set` entry of the audit log. The log is
 * where a change must be written anyway, so it is also where the settings are kept: one write,
 * never out of step with its record.
 */
export async function readAlertSettings(store: Pick<Store, 'listAudit'>, accountId: string): Promise<AlertSettings> {
  const [entry] = await store.listAudit(accountId, 1, undefined, { action: ALERTS_ACTION });
  if (!entry) return NO_ALERTS;
  const { balanceBelowNano, budgetSharePercent } = entry.detail as Record<string, unknown>;
  return {
    balanceBelowNano: typeof balanceBelowNano === 'number' ? balanceBelowNano : null,
    budgetSharePercent: typeof budgetSharePercent === 'number' ? budgetSharePercent : null,
  };
}

/** Which alerts hold for this summary: integer nano-USD throughout, the share compared without division. */
export function activeAlerts(settings: AlertSettings, summary: AccountSummary): ActiveAlert[] {
  const alerts: ActiveAlert[] = [];
  const available = summary.balanceNano - summary.heldNano;
  if (settings.balanceBelowNano !== null && available < settings.balanceBelowNano) {
    alerts.push({ kind: 'balance_low', thresholdNano: settings.balanceBelowNano, valueNano: available });
  }
  const budget = summary.monthlyBudgetNano;
  if (settings.budgetSharePercent !== null && budget !== null) {
    const used = summary.monthChargedNano + summary.monthHeldNano;
    // used / budget >= share / 100, in integers (BigInt: both sides may pass 2^53).
    if (BigInt(used) * 100n >= BigInt(budget) * BigInt(settings.budgetSharePercent)) {
      alerts.push({ kind: 'budget_share', thresholdNano: Number((BigInt(budget) * BigInt(settings.budgetSharePercent)) / 100n), valueNano: used });
    }
  }
  return alerts;
}

/** The account's alerts now. */
export async function currentAlerts(store: Pick<Store, 'listAudit' | 'accountSummary'>, accountId: string, now: number): Promise<ActiveAlert[]> {
  const [settings, summary] = await Promise.all([
    readAlertSettings(store, accountId),
    store.accountSummary(accountId, new Date(now).toISOString().slice(0, 7)),
  ]);
  return activeAlerts(settings, summary);
}
