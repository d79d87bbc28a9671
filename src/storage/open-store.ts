import type { GatewayConfig } from '../config/schema.ts';
import { createSqliteStore } from './sqlite/sqlite-store.ts';
import type { Store } from './store.ts';

/**
 * The one place that picks and opens the storage backend, shared by the server and the CLI,
 * so both always talk to the same database. Returns it migrated.
 */
export async function openStore(config: GatewayConfig): Promise<Store> {
  const store = createSqliteStore(config.database.path);
  try {
    await store.migrate();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
