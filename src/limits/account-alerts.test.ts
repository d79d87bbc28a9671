import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AccountSummary } from '../storage/records.ts';
import { activeAlerts } from './account-alerts.ts';

const summary = (overrides: Partial<AccountSummary> = {}): AccountSummary => ({
  balanceNano: 10_000_000_000,
  heldNano: 0,
  holdCount: 0,
  month: '2026-12',
  monthChargedNano: 0,
  monthHeldNano: 0,
  monthlyBudgetNano: null,
  ...overrides,
});

test('balance_low: when the available balance (holds taken off) is below the threshold, not at it', () => {
  const settings = { balanceBelowNano: 5_000_000_000, budgetSharePercent: null };
  assert.deepEqual(activeAlerts(settings, summary({ balanceNano: 5_000_000_000 })), []);
  assert.deepEqual(activeAlerts(settings, summary({ balanceNano: 5_000_000_001, heldNano: 2 })), [
    { kind: 'balance_low', thresholdNano: 5_000_000_000, valueNano: 4_999_999_999 },
  ]);
  assert.deepEqual(activeAlerts({ balanceBelowNano: null, budgetSharePercent: null }, summary({ balanceNano: 0 })), []);
});

test('budget_share: spend plus holds at or past the share of the budget; no budget, no alert', () => {
  const settings = { balanceBelowNano: null, budgetSharePercent: 80 };
  const budget = { monthlyBudgetNano: 100_000_000_000 };
  assert.deepEqual(activeAlerts(settings, summary({ ...budget, monthChargedNano: 79_999_999_999 })), []);
  assert.deepEqual(activeAlerts(settings, summary({ ...budget, monthChargedNano: 70_000_000_000, monthHeldNano: 10_000_000_000 })), [
    { kind: 'budget_share', thresholdNano: 80_000_000_000, valueNano: 80_000_000_000 },
  ]);
  assert.deepEqual(activeAlerts(settings, summary({ monthChargedNano: 10 ** 15 })), []);
  const huge = { monthlyBudgetNano: 9_007_199_254_740_991, monthChargedNano: 9_007_199_254_740_991 };
  assert.equal(activeAlerts({ balanceBelowNano: null, budgetSharePercent: 100 }, summary(huge)).length, 1, 'exact past 2^53');
});
