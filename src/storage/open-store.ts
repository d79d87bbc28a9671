import type { GatewayConfig } from '../config/schema.ts';
import { createSqliteStore } from './sqlite/sqlite-store.ts';
import { redactedUrl } from './redacted-url.ts';
import type { Store } from './store.ts';

export type StoreBackend = { kind: 'postgres'; url: string } | { kind: 'sqlite'; path: string };

/** `DATABASE_URL=postgres://...` (or postgresql://) selects PostgreSQL; without it, SQLite at database.path. */
export function storeBackend(config: GatewayConfig, env: NodeJS.ProcessEnv = process.env): StoreBackend {
  const url = env.DATABASE_URL?.trim();
  if (!url) return { kind: 'sqlite', path: config.database.path };
  if (/^postgres(ql)?:\/\//i.test(url)) return { kind: 'postgres', url };
  throw new Error(`DATABASE_URL must be a postgres:// or postgresql:// URL (unset it to use SQLite at ${config.database.path})`);
}

/** Where the store lives, for messages: the SQLite path or the URL without its password. */
export function describeStore(backend: StoreBackend): string {
  return backend.kind === 'postgres' ? redactedUrl(backend.url) : backend.path;
}

/**
 * The one place that picks and opens the storage backend, shared by the server and the CLI,
 * so both always talk to the same database. Returns it migrated.
 */
export async function openStore(config: GatewayConfig, env: NodeJS.ProcessEnv = process.env): Promise<Store> {
  const backend = storeBackend(config, env);
  // PostgreSQL's client loads only with DATABASE_URL: an embedded gateway does not carry it.
  const store =
    backend.kind === 'postgres' ? (await import('./postgres/postgres-store.ts')).createPostgresStore(backend.url) : createSqliteStore(backend.path);
  try {
    await store.migrate();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
