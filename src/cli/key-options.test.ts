import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../config/load-config.ts';
import { displayInstant, displayUsd, formatTable } from './format.ts';
import { parseDailyLimit, parseExpiry, parseModels, parseRateLimit, parseScopes } from './key-options.ts';

const now = new Date('2025-06-01T12:00:00.000Z');

test('expiry: durations from now, ISO dates, refusals', () => {
  assert.equal(parseExpiry(undefined, now), null);
  assert.equal(parseExpiry('90m', now), '2025-06-01T13:30:00.000Z');
  assert.equal(parseExpiry('12h', now), '2025-06-02T00:00:00.000Z');
  assert.equal(parseExpiry('30d', now), '2025-07-01T12:00:00.000Z');
  assert.equal(parseExpiry('2w', now), '2025-06-15T12:00:00.000Z');
  assert.equal(parseExpiry('2025-12-31', now), '2025-12-31T00:00:00.000Z');
  assert.equal(parseExpiry('2025-12-31T18:00:00+02:00', now), '2025-12-31T16:00:00.000Z');
  assert.throws(() => parseExpiry('2025-06-01T11:59:59Z', now), /not in the future/);
  assert.throws(() => parseExpiry('0d', now), /not in the future/);
  for (const bad of ['30', '3 days', '1y', 'June 5', '2025-13-45']) assert.throws(() => parseExpiry(bad, now), /--expires must be/, bad);
});

test('scopes, models, limits', () => {
  assert.deepEqual(parseScopes(undefined), ['inference']);
  assert.deepEqual(parseScopes(' fix , inference,fix'), ['fix', 'inference']);
  assert.throws(() => parseScopes(','), /at least one/);
  assert.throws(() => parseScopes('inference,root'), /unknown scope "root"/);

  const config = loadConfig(undefined, {});
  assert.equal(parseModels(undefined, config), null);
  assert.deepEqual(parseModels('svc/fast,sim/sage', config), ['svc/fast', 'sim/sage']);
  assert.throws(() => parseModels('svc/fast,svc/cheap', config), /unknown model "svc\/cheap"; choose from: svc\/fast/);
  assert.throws(() => parseModels('svc/fsat', config), /unknown model "svc\/fsat" \(did you mean svc\/fast\?\); choose from/);

  assert.equal(parseDailyLimit('0.25'), 250_000_000);
  assert.throws(() => parseDailyLimit('0'), /more than 0/);
  assert.throws(() => parseDailyLimit('$5'), /--daily-limit/);
  assert.equal(parseRateLimit('60'), 60);
  for (const bad of ['0', '-1', '1.5', 'ten', '']) assert.throws(() => parseRateLimit(bad), /--rate-limit/, bad);
});

test('display helpers', () => {
  assert.equal(displayUsd(5_000_000_000), '$5.00');
  assert.equal(displayUsd(345_000), '$0.000345');
  assert.equal(displayUsd(12_500_000_001), '$12.500000001');
  assert.equal(displayUsd(-1_230_000_000), '-$1.23');
  assert.equal(displayInstant('2025-01-31T18:05:09.123Z'), '2025-01-31 18:05Z');
  assert.equal(displayInstant(null), '-');
  assert.equal(formatTable(['A', 'LONG'], [['xyz', '1']]), 'A    LONG\nxyz  1');
});
