import { randomBytes } from 'node:crypto';
import type { PoolClient } from 'pg';
import { QueryFailedError, type DataSource } from 'typeorm';

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
  const runner = dataSource.createQueryRunner();
  try {
    return await preparedQueryOn<Row>((await runner.connect()) as PoolClient, statement, values);
  } finally {
    await runner.release();
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
