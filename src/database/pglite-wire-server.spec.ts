import { mkdtemp, rm } from 'node:fs/promises';
import { connect as connectTcp, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { startPgliteServer, type PgliteServer } from './pglite-server.js';

/** One frontend message: its type, its length, its body. */
function frontend(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(4 + body.length, 1);
  return Buffer.concat([header, body]);
}

const text = (value: string) => Buffer.from(`${value}\0`);
const simpleQuery = (sql: string) => frontend('Q', text(sql));
/** Parse, Bind and Execute of the unnamed statement, without the Sync that would end them. */
const unsyncedStatement = (sql: string) =>
  Buffer.concat([
    frontend('P', Buffer.concat([text(''), text(sql), Buffer.alloc(2)])),
    frontend('B', Buffer.concat([text(''), text(''), Buffer.alloc(6)])),
    frontend('E', Buffer.concat([text(''), Buffer.alloc(4)])),
  ]);

/**
 * A connection spoken to byte by byte, as no driver lets a test leave it: in the middle of an
 * extended-query sequence, or cut off with a transaction open.
 */
class RawConnection {
  private received = Buffer.alloc(0);
  private readonly waiting: Array<() => void> = [];

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      for (const wake of this.waiting.splice(0)) wake();
    });
  }

  static async open(url: string): Promise<RawConnection> {
    const { port } = new URL(url);
    const socket = connectTcp(Number(port), '127.0.0.1');
    await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const connection = new RawConnection(socket);
    const parameters = Buffer.concat([
      text('user'),
      text('postgres'),
      text('database'),
      text('postgres'),
      text(''),
    ]);
    const startup = Buffer.alloc(8);
    startup.writeInt32BE(8 + parameters.length, 0);
    startup.writeInt32BE(196608, 4);
    socket.write(Buffer.concat([startup, parameters]));
    await connection.answered('Z');
    return connection;
  }

  /** Sends bytes and resolves once the answer holds a message of `type` (consuming what came). */
  async send(bytes: Buffer, type: string): Promise<void> {
    this.socket.write(bytes);
    await this.answered(type);
  }

  private async answered(type: string): Promise<void> {
    for (;;) {
      const types: string[] = [];
      for (let at = 0; at + 5 <= this.received.length; at += 1 + this.received.readInt32BE(at + 1)) {
        types.push(String.fromCharCode(this.received[at]));
      }
      if (types.includes(type)) {
        this.received = Buffer.alloc(0);
        return;
      }
      await new Promise<void>((wake) => this.waiting.push(wake));
    }
  }
}

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

  it('answers the others once a connection is cut off inside a transaction', async () => {
    const b = await connect();
    await b.query('CREATE TABLE cut (n integer)');
    const cut = await RawConnection.open(server.url);
    await cut.send(simpleQuery('BEGIN'), 'Z');
    await cut.send(simpleQuery('INSERT INTO cut VALUES (1)'), 'Z');
    // Queued behind the open transaction, then answered when it is gone, without its row.
    const waiting = b.query<{ count: number }>('SELECT count(*)::integer AS count FROM cut');
    cut.socket.destroy();
    expect((await waiting).rows[0].count).toBe(0);
    const c = await connect();
    expect(
      (await c.query<{ count: number }>('SELECT count(*)::integer AS count FROM cut')).rows[0].count,
    ).toBe(0);
  });

  it('answers the others once a connection is cut off in the middle of a failed extended-query sequence', async () => {
    const b = await connect();
    const cut = await RawConnection.open(server.url);
    // The error makes the session skip every message until a Sync, which this connection never sends.
    await cut.send(unsyncedStatement('SELECT 1/0'), 'E');
    const waiting = b.query<{ n: number }>('SELECT $1::integer AS n', [7]);
    cut.socket.destroy();
    expect((await waiting).rows[0].n).toBe(7);
    const c = await connect();
    expect((await c.query<{ t: string }>("SELECT 'answered' AS t")).rows[0].t).toBe('answered');
  });
});

/** The database stopped and opened again in the same process, as a service restarted in a test is. */
describe('PgliteWireServer stopped with a transaction open and started again', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchboard-wire-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("serves the next server's connections, with what was committed and without what was open", async () => {
    const first = await startPgliteServer(join(dir, 'data'));
    const committed = new Client({ connectionString: first.url });
    await committed.connect();
    await committed.query('CREATE TABLE kept (n integer)');
    await committed.query('INSERT INTO kept VALUES (1)');
    const open = await RawConnection.open(first.url);
    await open.send(simpleQuery('BEGIN'), 'Z');
    await open.send(simpleQuery('INSERT INTO kept VALUES (2)'), 'Z');
    // Waits behind the open transaction when the server stops: it fails, it is not left hanging.
    committed.on('error', () => undefined);
    const waiting = committed.query('SELECT 1').catch((error: unknown) => error);
    await first.stop();
    expect(await waiting).toMatchObject({
      message: expect.stringMatching(/Connection terminated|ECONNRESET/),
    });

    const second = await startPgliteServer(join(dir, 'data'));
    try {
      const client = new Client({ connectionString: second.url });
      await client.connect();
      expect((await client.query<{ n: number }>('SELECT n FROM kept ORDER BY n')).rows).toEqual([{ n: 1 }]);
      await client.end();
    } finally {
      await second.stop();
    }
  });
});
