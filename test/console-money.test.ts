import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultRateText, nanoBig, usdAxis, nanoString, usd, usdExact, usdOfNano, utcInput, utcInputValue, when } from '../web/src/money.ts';

const MINUS = '\u2212';

test('summaries: two decimals, thousands separators, rounded half away from zero', () => {
  assert.equal(usd('13234.500000000'), '$13,234.50');
  assert.equal(usd('1000.000000000'), '$1,000.00');
  assert.equal(usd('1234567.891000000'), '$1,234,567.89');
  assert.equal(usd('999.995000000'), '$1,000.00');
  assert.equal(usd('0.004999999'), '<$0.01');
  assert.equal(usd('0.005000000'), '$0.01');
  assert.equal(usd('12.5'), '$12.50');
  assert.equal(usd('0'), '$0.00');
  assert.equal(usd('0.000000000'), '$0.00');
  assert.equal(usd(null), '—');
});

test('sub-cent amounts never read as $0.00', () => {
  assert.equal(usd('0.000184500'), '<$0.01');
  assert.equal(usd('0.000000001'), '<$0.01');
  assert.equal(usdExact('0.000184500'), '$0.0001845');
  assert.equal(usdExact('0.000000001'), '$0.000000001');
});

test('negative deltas carry a minus sign before the dollar sign', () => {
  assert.equal(usd('-5.000000000'), `${MINUS}$5.00`);
  assert.equal(usd('-13234.504999999'), `${MINUS}$13,234.50`);
  assert.equal(usd('-0.000184500'), `${MINUS}<$0.01`);
  assert.equal(usdExact('-1234.000184500'), `${MINUS}$1,234.0001845`);
});

test('full precision keeps every digit, also past what a double holds', () => {
  assert.equal(usdExact('13234.500000000'), '$13,234.50');
  assert.equal(usdExact('9007199.254740993'), '$9,007,199.254740993');
  assert.equal(nanoBig('9007199.254740993'), 9_007_199_254_740_993n);
  assert.equal(nanoString(-1_500_000_001n), '-1.500000001');
  assert.equal(usdOfNano(1_234_567_000_000), '$1,234.57');
});

test('times are UTC and say so; date inputs are read as UTC', () => {
  assert.equal(when('2026-12-02T13:31:24.123456789Z'), '2026-12-02 13:31:24 UTC');
  assert.equal(when('2026-12-02T23:30:00+05:00'), '2026-12-02 18:30:00 UTC');
  assert.equal(utcInput('2026-12-02T13:30'), '2026-12-02T13:30:00.000Z');
  assert.equal(utcInputValue('2026-12-02T13:30:00.000Z'), '2026-12-02T13:30');
});

test('a default rate limit of 0 reads as no limit, never as "0 requests per minute"', () => {
  assert.match(defaultRateText(0), /not rate-limited/);
  assert.doesNotMatch(defaultRateText(0), /0 requests per minute/);
  assert.match(defaultRateText(1200), /default of 1,200 requests per minute/);
});

test('chart amounts under a cent keep two significant digits instead of "<$0.01" on every tick', () => {
  assert.equal(usdAxis(184_500), '$0.00018');
  assert.equal(usdAxis(92_250), '$0.000092');
  assert.equal(usdAxis(0), '$0.00');
  assert.equal(usdAxis(1_234_567_000_000), '$1,234.57');
});
