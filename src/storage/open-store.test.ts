import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { GatewayConfig } from '../config/schema.ts';
import { describeStore, openStore, storeBackend } from './open-store.ts';
import { DEFAULT_ACCOUNT_ID } from './store.ts';

const config = { database: { path: ':memory:' } } as GatewayConfig;

test('DATABASE_URL=postgres:// or postgresql:// selects PostgreSQL; without it, SQLite at database.path', () => {
  assert.deepEqual(storeBackend(config, {}), { kind: 'sqlite', path: ':memory:' });
  assert.deepEqual(storeBackend(config, { DATABASE_URL: '  ' }), { kind: 'sqlite', path: ':memory:' });
  assert.deepEqual(storeBackend(config, { DATABASE_URL: 'postgres://u@h/db' }), { kind: 'postgres', url: 'postgres://u@h/db' });
  assert.deepEqual(storeBackend(config, { DATABASE_URL: 'postgresql://u@h/db' }), { kind: 'postgres', url: 'postgresql://u@h/db' });
  assert.throws(() => storeBackend(config, { DATABASE_URL: 'mysql://u@h/db' }), /DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL/);
});

test('describeStore never shows the password', () => {
  assert.equal(describeStore({ kind: 'postgres', url: 'postgres://gateway:secret@db:5432/gw' }), 'postgres://gateway:***@db:5432/gw');
  assert.equal(describeStore({ kind: 'sqlite', path: './data/gateway.db' }), './data/gateway.db');
});

test('openStore returns the store migrated', async () => {
  const store = await openStore(config, {});
  try {
    assert.equal(await store.getBalance(DEFAULT_ACCOUNT_ID), 0);
  } finally {
    await store.close();
  }
});
