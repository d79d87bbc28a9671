import { test } from 'node:test';
import assert from 'node:assert/strict';
import { costOfParts, formatUsd, parseUsd } from './money.ts';

test('parses USD decimals into exact nano-USD', () => {
  assert.equal(parseUsd('12.5'), 12_500_000_000);
  assert.equal(parseUsd('0.000000001'), 1);
  assert.equal(parseUsd('0.10'), 100_000_000);
  assert.equal(parseUsd('3'), 3_000_000_000);
  assert.throws(() => parseUsd('0.0000000001'), /finer than one nano-dollar/);
  assert.throws(() => parseUsd('-1'), /not a non-negative/);
  assert.throws(() => parseUsd('1e3'), /not a non-negative/);
});

test('formats nano-USD with nine decimal places', () => {
  assert.equal(formatUsd(184_500), '0.000184500');
  assert.equal(formatUsd(12_500_000_000), '12.500000000');
  assert.equal(formatUsd(0), '0.000000000');
  assert.equal(formatUsd(-5), '-0.000000005');
});

test('costs are exact sums rounded once, half up', () => {
  // 1234 tokens at $0.40/1M + 100 cached at $0.10/1M + 57 out at $1.60/1M
  // = 493600 + 10000 + 91200 nano = 594800 nano
  assert.equal(
    costOfParts([
      [1234, parseUsd('0.40')],
      [100, parseUsd('0.10')],
      [57, parseUsd('1.60')],
    ]),
    594_800,
  );
  // $0.0375/1M x 3 tokens = 112.5 nano -> 113
  assert.equal(costOfParts([[3, parseUsd('0.0375')]]), 113);
  // large numbers stay exact: 10M tokens at $75/1M = $750
  assert.equal(costOfParts([[10_000_000, parseUsd('75')]]), 750 * 1e9);
});
