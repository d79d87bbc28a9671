import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { loadAddressTools } from '../../auth/address-tools.ts';
import type { AuditEntry } from '../../storage/records.ts';
import { auditDetail, auditSentence, displayActor } from './audit-sentences.ts';

const OWNER = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const CHECKSUMMED = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const entry = (action: string, detail: Record<string, unknown>, actor = CHECKSUMMED): AuditEntry => ({
  id: 1,
  accountId: 'acct',
  at: '2026-12-02T10:00:00.000Z',
  actor,
  action,
  detail,
});

before(() => loadAddressTools());

test('actors: addresses checksummed whatever case they were stored in; the CLI as it is', () => {
  assert.equal(displayActor(OWNER), CHECKSUMMED);
  assert.equal(displayActor('cli'), 'cli');
  assert.equal(
    auditSentence(entry('funds.added', { amount: '13234.500000000', note: 'invoice 7' }, 'cli')),
    'The CLI added $13,234.50 to the balance ("invoice 7").',
  );
});

test('one sentence per entry: who, what, on what, before and after', () => {
  assert.equal(
    auditSentence(entry('key.limits', { prefix: 'svc_uJi7Lxhl', dailyLimit: '2.500000000', rateLimitPerMinute: 60, before: { dailyLimit: null } })),
    `${CHECKSUMMED} changed the limits of key svc_uJi7Lxhl: daily limit from no daily limit to $2.50 a day.`,
  );
  assert.equal(
    auditSentence(entry('key.updated', { prefix: 'svc_a', name: 'ci', models: ['svc/fast'], before: { name: 'laptop', models: null } })),
    `${CHECKSUMMED} changed key svc_a: name from "laptop" to "ci", models from every model to svc/fast.`,
  );
  assert.equal(auditSentence(entry('key.revoked', { keyId: 'key_1', prefix: 'svc_a' })), `${CHECKSUMMED} revoked key svc_a.`);
  assert.equal(auditSentence(entry('budget.set', { monthly_budget: '0.000184500' })), `${CHECKSUMMED} set the monthly budget to <$0.01.`);
  assert.equal(auditSentence(entry('budget.set', { monthly_budget: null })), `${CHECKSUMMED} removed the monthly budget.`);
  assert.equal(
    auditSentence(entry('budget.set', { monthly_budget: '250.000000000', before: { monthly_budget: '1200.000000000' } })),
    `${CHECKSUMMED} set the monthly budget to $250.00 (it was $1,200.00).`,
  );
  assert.equal(
    auditSentence(entry('budget.set', { monthly_budget: null, before: { monthly_budget: '250.000000000' } })),
    `${CHECKSUMMED} removed the monthly budget (it was $250.00).`,
  );
  assert.equal(
    auditSentence(entry('budget.set', { monthly_budget: '5.000000000', before: { monthly_budget: null } })),
    `${CHECKSUMMED} set the monthly budget to $5.00 (there was none).`,
  );
  assert.equal(auditSentence(entry('member.owner', { address: OWNER }, OWNER)), `${CHECKSUMMED} signed in first and became the owner.`);
  assert.equal(
    auditSentence(entry('rules.set', { alias: 'svc/fast', candidates: ['up/beta', 'up/alpha'], reasoning: 'low' })),
    `${CHECKSUMMED} set svc/fast to try up/beta, up/alpha in that order, reasoning low.`,
  );
  assert.equal(
    auditSentence(entry('alerts.set', { balanceBelow: '25.000000000', budgetShare: 80, before: { balanceBelow: null, budgetShare: null } })),
    `${CHECKSUMMED} set the alerts: low-balance alert from off to below $25.00, budget alert from off to 80% of the budget.`,
  );
});

test('details: snake_case fields, addresses checksummed', () => {
  assert.deepEqual(auditDetail({ keyId: 'key_1', rateLimitPerMinute: 5, before: { dailyLimit: null }, address: OWNER }), {
    key_id: 'key_1',
    rate_limit_per_minute: 5,
    before: { daily_limit: null },
    address: CHECKSUMMED,
  });
});
