import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatInstantNanos, parseInstantNanos } from './instant-nanos.ts';

test('nine fractional digits round-trip exactly, beyond what a JS number holds', () => {
  for (const text of [
    '2026-11-24T03:58:21.123456789Z',
    '2026-11-24T03:58:21.000000000Z',
    '1970-01-01T00:00:00.000000001Z',
    '9999-12-31T23:59:59.999999999Z',
  ]) {
    assert.equal(formatInstantNanos(parseInstantNanos(text)!), text);
  }
  assert.equal(parseInstantNanos('2026-11-24T03:58:21.123456789Z'), 1_795_492_701_123_456_789n);
  assert.equal(formatInstantNanos(-1n), '1969-12-31T23:59:59.999999999Z');
});

test('fewer digits, offsets and a date alone are the same instants Date.parse sees', () => {
  const cases: Array<[string, string]> = [
    ['2026-11-24T03:58:21.123Z', '2026-11-24T03:58:21.123000000Z'],
    ['2026-11-24T03:58:21.1Z', '2026-11-24T03:58:21.100000000Z'],
    ['2026-11-24T03:58:21Z', '2026-11-24T03:58:21.000000000Z'],
    ['2026-11-24T03:58Z', '2026-11-24T03:58:00.000000000Z'],
    ['2026-11-24', '2026-11-24T00:00:00.000000000Z'],
    ['2026-11-24T05:58:21.1234+02:00', '2026-11-24T03:58:21.123400000Z'],
    ['2026-11-24T01:28:21.5-0230', '2026-11-24T03:58:21.500000000Z'],
    // No offset: UTC, whatever the server's time zone.
    ['2026-11-24T03:58:21.123456', '2026-11-24T03:58:21.123456000Z'],
  ];
  for (const [text, expected] of cases) assert.equal(formatInstantNanos(parseInstantNanos(text)!), expected, text);
});

test('anything else is not an instant', () => {
  for (const text of [
    'yesterday',
    '',
    '2026-11-24T03:58:21.1234567891Z',
    '2026-13-01T00:00:00Z',
    '2026-11-24 03:58:21Z',
    '1795492701123',
    '2026-11-24T03:58:21.Z',
  ]) {
    assert.equal(parseInstantNanos(text), null, text);
  }
});
