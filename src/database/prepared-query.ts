import { randomBytes } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { QueryFailedError, TypeORMError, type DataSource } from 'typeorm';

/** A statement every turn runs: parsed and planned once per connection, then only executed. */
export interface PreparedStatement {
  /** Unique among prepared statements; a suffix unique to the connection is appended. */
  name: string;
  text: string;
}

/**
 * Suffixes that make a statement's name unique per connection, across processes: the embedded
 * database serves every connection of every process that shares it from one session, where
 * prepared statements are shared too, so two connections preparing the same name would collide.
 */
const suffixes = new WeakMap<object, string>();
const processTag = randomBytes(4).toString('hex');
let lastSerial = 0;

/**
 * Runs a statement as a named prepared statement: the database parses and plans its text once per
 * connection instead of on every call (on the hot turn statements, about half the database's CPU
 * per turn, on PostgreSQL and on the embedded database alike). Connections and errors are
 * handled as TypeORM's `query` does (errors are its QueryFailedError), so callers and the outage
 * detection see no difference. On the embedded database, a process that goes away leaves its few
 * statements in the shared session (at most its connections × the statements named here).
 */
export async function preparedQuery<Row>(
  dataSource: DataSource,
  statement: PreparedStatement,
  values: unknown[],
): Promise<Row[]> {
  // The connection straight from TypeORM's pool, held as its query runner holds one (an `error`
  // while held releases it broken, so the pool drops it), without the runner: a QueryRunner, its
  // EntityManager and broadcaster per statement were about 1% of a JSON turn's CPU at 32 clients.
  const pool = (dataSource.driver as unknown as { master?: Pool }).master;
  if (!pool) throw new TypeORMError('Driver not Connected');
  const client = await pool.connect();
  let released = false;
  const release = (error?: Error) => {
    if (released) return;
    released = true;
    client.removeListener('error', release);
    client.release(error);
  };
  client.on('error', release);
  try {
    return await preparedQueryOn<Row>(client, statement, values);
  } finally {
    release();
  }
}

/** `preparedQuery` on a connection the caller holds (errors are TypeORM's QueryFailedError too). */
export async function preparedQueryOn<Row>(
  client: PoolClient,
  statement: PreparedStatement,
  values: unknown[],
): Promise<Row[]> {
  let suffix = suffixes.get(client);
  if (suffix === undefined) suffixes.set(client, (suffix = `${processTag}_${++lastSerial}`));
  try {
    const result = await client.query({ name: `${statement.name}_${suffix}`, text: statement.text, values });
    return result.rows as Row[];
  } catch (error) {
    throw new QueryFailedError(statement.text, values, error as Error);
  }
}
