import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decimalTextOf, nanoPerMillionOf } from './exact-price.ts';

test('catalog numbers become exact nano-USD per 1M tokens through their decimal text', () => {
  // Read from the number's shortest text, never multiplied as a float.
  assert.equal(nanoPerMillionOf(0.075), 75_000_000);
  assert.equal(nanoPerMillionOf(3.75), 3_750_000_000);
  assert.equal(nanoPerMillionOf(1.25), 1_250_000_000);
  assert.equal(nanoPerMillionOf(0.275), 275_000_000);
  assert.equal(nanoPerMillionOf(22.5), 22_500_000_000);
  assert.equal(nanoPerMillionOf(0), 0);
  assert.equal(nanoPerMillionOf(0.07), 70_000_000);
});

test('exponent notation is spelled out in digits', () => {
  assert.equal(decimalTextOf(1e-7), '0.0000001');
  assert.equal(decimalTextOf(2.5e-8), '0.000000025');
  assert.equal(decimalTextOf(1e21), '1000000000000000000000');
  assert.equal(nanoPerMillionOf(2.5e-8), 25);
  assert.throws(() => nanoPerMillionOf(1e-10), /finer than one nano-dollar/);
  assert.throws(() => decimalTextOf(-1), /not a non-negative price/);
});
