import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { parseConfig } from '../../src/config/load-config.ts';
import type { GatewayConfig } from '../../src/config/schema.ts';
import { createPostgresStore } from '../../src/storage/postgres/postgres-store.ts';
import type { Store } from '../../src/storage/store.ts';
import { startFakeUpstream, type FakeUpstream } from '../fake-upstream/fake-upstream.ts';
import { harnessConfigText } from './gateway-harness.ts';
import { startGatewayProcess, type GatewayProcess } from './gateway-process.ts';
import { PG_TEST_URL, urlOnSchema } from './postgres-test-connection.ts';
import { REDIS_TEST_URL } from './redis-test-connection.ts';

/** Gateway processes sharing one fresh PostgreSQL schema and Redis, in front of one fake upstream. */
export interface GatewayFleet {
  fake: FakeUpstream;
  /** This test's own store on the schema (migrated), to set up and check the ledger. */
  store: Store;
  gateways: GatewayProcess[];
  /** Direct SQL on the schema. */
  sql: pg.Pool;
  config: GatewayConfig;
  configPath: string;
  /** What a gateway process of the fleet runs with (DATABASE_URL, REDIS_URL): start another with it. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/**
 * `processes` gateway processes (default 3) on the harness config plus `extraConfig`; `prepare`
 * runs on the migrated store before they start (funds, keys they must see at once).
 */
export async function startGatewayFleet(options: {
  name: string;
  extraConfig?: string;
  processes?: number;
  prepare?: (store: Store) => Promise<void>;
}): Promise<GatewayFleet> {
  const schema = `gw_${options.name}_${randomBytes(5).toString('hex')}`;
  const setup = new pg.Client({ connectionString: PG_TEST_URL });
  await setup.connect();
  await setup.query(`CREATE SCHEMA ${schema}`);
  await setup.end();
  const databaseUrl = urlOnSchema(schema);
  const fake = await startFakeUpstream();
  const directory = await mkdtemp(join(tmpdir(), `gateway-${options.name}-`));
  const configText = `${harnessConfigText(fake.url, join(directory, 'unused.db'), 30_000)}\n${options.extraConfig ?? ''}\n`;
  const configPath = join(directory, 'gateway.yaml');
  await writeFile(configPath, configText);
  const store = createPostgresStore(databaseUrl);
  await store.migrate();
  await options.prepare?.(store);
  const env = { DATABASE_URL: databaseUrl, REDIS_URL: REDIS_TEST_URL };
  const gateways = await Promise.all(Array.from({ length: options.processes ?? 3 }, () => startGatewayProcess(configPath, env)));
  const sql = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  return {
    fake,
    store,
    gateways,
    sql,
    config: parseConfig(configText, options.name),
    configPath,
    env,
    async close() {
      await Promise.all(gateways.map((gateway) => gateway.stop('SIGKILL')));
      await store.close();
      await fake.close();
      await sql.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await sql.end();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
