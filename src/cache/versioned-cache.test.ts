import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VersionedCache } from './versioned-cache.ts';

test('a new version drops every entry, the same one keeps them', () => {
  const cache = new VersionedCache<string>(10);
  cache.observe('1');
  cache.set('a', 'record a', '1');
  cache.observe('1');
  assert.equal(cache.get('a'), 'record a');
  cache.observe('2');
  assert.equal(cache.get('a'), undefined);
  assert.equal(cache.version, '2');
});

test('a value read before a newer version was observed is not kept (the async lookup race)', () => {
  const cache = new VersionedCache<string>(10);
  cache.observe('1');
  const slowReadAt = cache.version; // request B: observed 1, its database read is slow
  cache.observe('2'); // request A: the key was revoked and the version bumped
  cache.set('key', 'revoked', '2'); // A's read finishes first
  cache.set('key', 'active (before the revocation)', slowReadAt); // B's finishes later
  assert.equal(cache.get('key'), 'revoked');
});

test('nothing is kept before a version was observed', () => {
  const cache = new VersionedCache<string>(10);
  cache.set('a', 'record a', undefined);
  assert.equal(cache.size, 0);
});

test('it stays bounded by forgetting the oldest entry', () => {
  const cache = new VersionedCache<number>(3);
  cache.observe('1');
  for (let i = 0; i < 5; i += 1) cache.set(`k${i}`, i, '1');
  assert.equal(cache.size, 3);
  assert.deepEqual([cache.get('k0'), cache.get('k1'), cache.get('k2'), cache.get('k4')], [undefined, undefined, 2, 4]);
  cache.set('k2', 20, '1'); // replacing an entry evicts nothing
  assert.equal(cache.size, 3);
  assert.throws(() => new VersionedCache(0), RangeError);
});
