import type pg from 'pg';
import { createPool, redactedUrl } from './postgres-pool.ts';

type Statement = pg.QueryConfig<unknown[]>;
type Runner = pg.Pool | pg.PoolClient;

// undefined_table, undefined_function: the schema was never created here.
const MISSING_SCHEMA_CODES = new Set(['42P01', '42883']);

/**
 * The pool, plus the two ways the store talks through it: one statement, or a transaction. And a
 * second, small pool whose commits do not wait for the WAL flush (synchronous_commit off), for
 * settlements only (`settle`): what they committed is visible to every session at once, and on
 * disk a few milliseconds later, which `flushed` confirms (postgres-durability.ts).
 */
export class PostgresDatabase {
  readonly pool: pg.Pool;
  private readonly settlements: pg.Pool;
  private readonly location: string;
  /** The server's start time at the last flush barrier. */
  private serverStartedAt: string | undefined;

  constructor(url: string) {
    this.pool = createPool(url);
    // One batch of settlements is out at a time (postgres-group-commit.ts); the second is for a renewal's turn.
    this.settlements = createPool(url, { max: 2, flushLater: true });
    this.location = redactedUrl(url);
  }

  /** One settlement statement, committed without waiting for the WAL flush. */
  async settle<Row extends pg.QueryResultRow>(statement: Statement): Promise<Row | undefined> {
    return this.first<Row>(statement, this.settlements);
  }

  /**
   * Resolves once every commit that returned before this call is on disk: a transaction with an
   * id of its own commits synchronously, and its flush takes the WAL before it along. Rejects when
   * the server restarted since the last barrier (on a new connection the barrier would pass, yet
   * commits not flushed before the restart are gone).
   */
  async flushed(): Promise<void> {
    const row = await this.first<{ started: string }>({
      name: 'gateway_flush_barrier',
      text: 'SELECT pg_current_xact_id()::text AS xid, pg_postmaster_start_time()::text AS started',
      values: [],
    });
    const previous = this.serverStartedAt;
    this.serverStartedAt = row!.started;
    if (previous !== undefined && previous !== row!.started)
      throw new Error('the database server restarted: commits since the last flush may be lost');
  }

  async end(): Promise<void> {
    await Promise.all([this.pool.end(), this.settlements.end()]);
  }

  /** One statement, on the pool (a round trip of its own) or on a transaction's client. */
  async rows<Row extends pg.QueryResultRow>(statement: Statement, runner: Runner = this.pool): Promise<Row[]> {
    try {
      return (await runner.query<Row>(statement)).rows;
    } catch (error) {
      throw this.explain(error);
    }
  }

  async first<Row extends pg.QueryResultRow>(statement: Statement, runner: Runner = this.pool): Promise<Row | undefined> {
    return (await this.rows<Row>(statement, runner))[0];
  }

  /** Runs `work` between BEGIN and COMMIT on one pooled connection; any throw rolls back. */
  async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      // A connection that cannot even roll back is closed rather than handed to the next caller.
      await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
      throw this.explain(error);
    } finally {
      client.release(broken);
    }
  }

  private explain(error: unknown): unknown {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && MISSING_SCHEMA_CODES.has(code)) {
      return new Error(`database ${this.location} has no gateway schema yet; call migrate() first (${(error as Error).message})`, { cause: error });
    }
    return error;
  }
}
