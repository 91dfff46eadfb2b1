import { Client } from 'pg';
import { startPgliteServer, type PgliteServer } from './pglite-server.js';

/** Several `pg` connections on PGlite's one session, each seeing only its own statements. */
describe('PgliteWireServer', () => {
  let server: PgliteServer;
  const clients: Client[] = [];
  const connect = async () => {
    const client = new Client({ connectionString: server.url });
    await client.connect();
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    server = await startPgliteServer('memory://');
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.end().catch(() => undefined)));
    await server?.stop();
  });

  it("answers every connection's extended-query statements with its own results, errors included", async () => {
    const [a, b, c] = await Promise.all([connect(), connect(), connect()]);
    const rounds = Array.from({ length: 40 }, (_, i) => i);
    const [failures, sums, texts] = await Promise.all([
      // An error in the middle of a Parse/Bind/Execute/Sync sequence makes the session skip to Sync.
      Promise.all(
        rounds.map((i) => a.query('SELECT $1::integer AS n', [`not a number ${i}`]).catch((e: Error) => e)),
      ),
      Promise.all(
        rounds.map(async (i) => (await b.query('SELECT $1::integer + $2::integer AS n', [i, 1])).rows[0].n),
      ),
      Promise.all(rounds.map(async (i) => (await c.query(`SELECT 'simple ${i}' AS t`)).rows[0].t)),
    ]);
    expect(failures.map((e) => (e as Error).message)).toEqual(
      rounds.map((i) => `invalid input syntax for type integer: "not a number ${i}"`),
    );
    expect(sums).toEqual(rounds.map((i) => i + 1));
    expect(texts).toEqual(rounds.map((i) => `simple ${i}`));
  });

  it("keeps a transaction's statements together and rolls back one whose connection goes away", async () => {
    const [a, b] = await Promise.all([connect(), connect()]);
    await a.query('CREATE TABLE notes (text varchar)');
    await a.query('BEGIN');
    await a.query('INSERT INTO notes VALUES ($1)', ['inside']);
    const read = b.query<{ count: number }>('SELECT count(*)::integer AS count FROM notes');
    await a.query('INSERT INTO notes VALUES ($1)', ['still inside']);
    await a.end();
    expect((await read).rows[0].count).toBe(0);
    expect((await b.query('SELECT 1 AS one')).rows[0].one).toBe(1);
  });
});
