import { randomBytes } from 'node:crypto';
import { after } from 'node:test';
import pg from 'pg';
import { createPostgresStore } from '../storage/postgres/postgres-store.ts';
import type { Store } from '../storage/store.ts';
import { PG_TEST_URL, postgresUnreachable, reportPostgresUnreachable, urlOnSchema } from '../../test/helpers/postgres-test-connection.ts';
import { sampleKey } from './store-samples.ts';

/** What the PostgreSQL store's test files share: an admin pool and fresh schemas, dropped when the file's tests end. */
export interface PostgresTestSchemas {
  admin: pg.Pool;
  /** A new empty schema. */
  freshSchema(): Promise<string>;
  /** A store on a new empty schema, not migrated yet. */
  freshStore(): Promise<Store>;
  /** Two stores (two pools, as two gateway processes would have) on one fresh, migrated schema with the sample key. */
  withTwoProcesses(body: (first: Store, second: Store, schema: string) => Promise<void>): Promise<void>;
}

/** Call at the top level of a test file whose PostgreSQL answers (postgresUnreachable() returned null). */
export function postgresTestSchemas(): PostgresTestSchemas {
  const admin = new pg.Pool({ connectionString: PG_TEST_URL, max: 2 });
  const schemas: string[] = [];
  after(async () => {
    for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });
  async function freshSchema(): Promise<string> {
    const schema = `gw_test_${randomBytes(6).toString('hex')}`;
    await admin.query(`CREATE SCHEMA ${schema}`);
    schemas.push(schema);
    return schema;
  }
  return {
    admin,
    freshSchema,
    freshStore: async () => createPostgresStore(urlOnSchema(await freshSchema())),
    async withTwoProcesses(body) {
      const schema = await freshSchema();
      const first = createPostgresStore(urlOnSchema(schema, { pool_max: '8' }));
      const second = createPostgresStore(urlOnSchema(schema, { pool_max: '8' }));
      try {
        await Promise.all([first.migrate(), second.migrate()]);
        await first.insertKey(sampleKey());
        await body(first, second, schema);
      } finally {
        await Promise.all([first.close(), second.close()]);
      }
    },
  };
}

/** Runs `body` (which registers the suite's tests) with fresh schemas, or reports the suite skipped (failed under CI=true) without PostgreSQL. */
export async function onPostgres(suite: string, body: (schemas: PostgresTestSchemas) => void): Promise<void> {
  const unreachable = await postgresUnreachable();
  if (unreachable !== null) reportPostgresUnreachable(suite, unreachable);
  else body(postgresTestSchemas());
}
