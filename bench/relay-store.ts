import pg from 'pg';

/**
 * What the persisting relay ("relay-pg") adds to the bare relay: each completed turn stored with
 * one prepared INSERT (id, model, input, output) into its own table of the bench database,
 * awaited before the final event. This is the least a gateway can spend to keep every turn, so the
 * service's per-turn cost is judged against it (issue 27). The table has a primary key, because a
 * stored turn must be found again by its id; input and output are jsonb, as the service keeps them.
 */

export const RELAY_TABLE = 'bench_relay_turns';
/** The persisting relay's backends carry this name, so their CPU is told apart from the service's. */
export const RELAY_APPLICATION = 'bench-relay-pg';

const INSERT = {
  name: 'bench_relay_insert',
  text: `INSERT INTO ${RELAY_TABLE} (id, model, input, output) VALUES ($1, $2, $3, $4)`,
};

export interface StoredTurn {
  id: string;
  model: string;
  input: unknown;
  output: unknown;
}

export interface RelayStore {
  save(turn: StoredTurn): Promise<void>;
  close(): Promise<void>;
}

/** Opens a pool of `poolMax` connections (the service's default, for a like-for-like pool). */
export async function openRelayStore(url: string, poolMax: number): Promise<RelayStore> {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolMax,
    application_name: RELAY_APPLICATION,
    connectionTimeoutMillis: 5000,
  });
  await pool.query(
    `CREATE TABLE IF NOT EXISTS ${RELAY_TABLE} (id text PRIMARY KEY, model text NOT NULL, input jsonb NOT NULL, output jsonb NOT NULL)`,
  );
  return {
    async save(turn) {
      // A named query config: node-postgres parses it once per connection, then only binds and executes.
      await pool.query({
        ...INSERT,
        values: [turn.id, turn.model, JSON.stringify(turn.input ?? null), JSON.stringify(turn.output)],
      });
    },
    close: () => pool.end(),
  };
}
