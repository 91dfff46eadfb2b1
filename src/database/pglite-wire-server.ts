import { createServer, type Server, type Socket } from 'node:net';
import type { PGlite } from '@electric-sql/pglite';

/** Request codes of the untyped first messages of a connection (PostgreSQL protocol 3.0). */
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;

/** Message types. */
const TERMINATE = 0x58; // 'X'
const READY_FOR_QUERY = 0x5a; // 'Z'
const IDLE = 0x49; // 'I': ReadyForQuery's status outside any transaction block

const SYNC = Uint8Array.of(0x53, 0, 0, 0, 4);

/** `Query('ROLLBACK')`. */
function rollbackMessage(): Uint8Array {
  const text = Buffer.from('ROLLBACK\0');
  const message = Buffer.alloc(5 + text.length);
  message[0] = 0x51; // 'Q'
  message.writeInt32BE(4 + text.length, 1);
  text.copy(message, 5);
  return message;
}

interface Queued {
  connection: Connection;
  message: Uint8Array;
}

/**
 * One client connection: splits its bytes into protocol messages, in order, as they arrive.
 * Parsing is synchronous in the 'data' listener, so a connection's messages are queued exactly in
 * the order it sent them.
 */
class Connection {
  private buffer: Buffer = Buffer.alloc(0);
  private started = false;
  closed = false;

  constructor(
    readonly socket: Socket,
    private readonly onMessage: (connection: Connection, message: Uint8Array) => void,
  ) {}

  receive(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const length = this.nextLength();
      if (length === undefined || this.buffer.length < length) return;
      const message = new Uint8Array(this.buffer.subarray(0, length));
      this.buffer = this.buffer.subarray(length);
      if (this.started || this.handleStartup(message)) this.onMessage(this, message);
      if (this.closed) return;
    }
  }

  write(data: Uint8Array): void {
    if (!this.closed && this.socket.writable) this.socket.write(data);
  }

  /** The whole length of the next message, once its header is in the buffer. */
  private nextLength(): number | undefined {
    if (!this.started) return this.buffer.length >= 4 ? this.buffer.readInt32BE(0) : undefined;
    return this.buffer.length >= 5 ? 1 + this.buffer.readInt32BE(1) : undefined;
  }

  /**
   * The untyped messages before the first typed one: encryption requests are declined (the
   * client then goes on in clear text, on loopback), cancel requests are not supported, and the
   * startup message is passed on (PGlite answers it). False when the message is consumed here.
   */
  private handleStartup(message: Uint8Array): boolean {
    const code = message.length >= 8 ? Buffer.from(message).readInt32BE(4) : 0;
    if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
      this.write(Buffer.from('N'));
      return false;
    }
    if (code === CANCEL_REQUEST || code !== PROTOCOL_3) {
      this.closed = true;
      this.socket.destroy();
      return false;
    }
    this.started = true;
    return true;
  }
}

/**
 * Serves one PGlite over the PostgreSQL wire protocol to several connections. PGlite is one
 * session, and a session's state is not only its transaction: the unnamed prepared statement
 * and portal of the extended query protocol, and the "skip every message until Sync" that
 * follows an error in it, belong to the session too. So a connection holds the session from
 * its first message until PGlite answers it with ReadyForQuery outside a transaction block —
 * a whole Parse/Bind/Describe/Execute/Sync sequence, or a whole transaction — and only then may
 * another connection's messages run. (@electric-sql/pglite-socket's multiplexer, used before,
 * kept transactions together but interleaved extended-query sequences: a connection's Parse
 * could be followed by another's, or another's simple query could fall into the skip after an
 * error and never be answered, which hung concurrent uploads.)
 */
export class PgliteWireServer {
  private readonly server: Server;
  private readonly connections = new Set<Connection>();
  private queue: Queued[] = [];
  /** The connection whose sequence or transaction is open on the session. */
  private owner: Connection | undefined;
  private pumping = false;
  private stopped = false;

  constructor(
    private readonly db: PGlite,
    private readonly maxConnections: number,
  ) {
    this.server = createServer((socket) => this.accept(socket));
  }

  /** Listens on 127.0.0.1 (a free port); resolves with the port. */
  async listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    return (this.server.address() as { port: number }).port;
  }

  /** Stops accepting, closes every connection and waits for the statement in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const connection of this.connections) connection.socket.destroy();
    this.queue = [];
    await closed;
    while (this.pumping) await new Promise((resolve) => setImmediate(resolve));
  }

  private accept(socket: Socket): void {
    if (this.stopped || this.connections.size >= this.maxConnections) {
      socket.end('Too many connections\n');
      return;
    }
    socket.setNoDelay(true);
    const connection = new Connection(socket, (from, message) => this.enqueue(from, message));
    this.connections.add(connection);
    socket.on('data', (chunk: Buffer) => connection.receive(chunk));
    socket.on('error', () => socket.destroy());
    socket.on('close', () => this.disconnected(connection));
  }

  private enqueue(connection: Connection, message: Uint8Array): void {
    if (message[0] === TERMINATE) {
      connection.socket.end();
      return;
    }
    this.queue.push({ connection, message });
    void this.pump();
  }

  /** The next message to run: the owner's, while a connection owns the session. */
  private next(): Queued | undefined {
    const index = this.owner ? this.queue.findIndex((item) => item.connection === this.owner) : 0;
    return index < 0 ? undefined : this.queue.splice(index, 1)[0];
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      for (let item = this.next(); item && !this.stopped; item = this.next()) {
        const idle = await this.run(item);
        this.owner = idle ? undefined : item.connection;
        if (this.owner?.closed) this.closeLeftOpen();
      }
    } finally {
      this.pumping = false;
    }
  }

  /** Runs one message; true when PGlite's answer ended with ReadyForQuery outside a transaction. */
  private async run({ connection, message }: Queued): Promise<boolean> {
    const tail = new Uint8Array(6);
    let tailLength = 0;
    try {
      await this.db.runExclusive(() =>
        this.db.execProtocolRawStream(message, {
          onRawData: (data) => {
            // `data` is a view of PGlite's output buffer, which the next chunk overwrites; a write
            // the socket has to queue (a large answer, a slow reader) must hold a copy of its own.
            connection.write(Buffer.from(data));
            // The last six bytes answered: a ReadyForQuery is 'Z', length 5, status.
            for (const byte of data.subarray(Math.max(0, data.length - 6))) {
              tail.copyWithin(0, 1);
              tail[5] = byte;
              tailLength = Math.min(6, tailLength + 1);
            }
          },
        }),
      );
    } catch {
      // PGlite itself failed (closing, or broken): this connection cannot go on.
      connection.socket.destroy();
      return true;
    }
    return tailLength === 6 && tail[0] === READY_FOR_QUERY && tail[4] === 5 && tail[5] === IDLE;
  }

  /**
   * A connection went away: its queued messages are dropped, and if it held the session, what it
   * left open is closed before anyone else's messages run.
   */
  private disconnected(connection: Connection): void {
    connection.closed = true;
    this.connections.delete(connection);
    this.queue = this.queue.filter((item) => item.connection !== connection);
    // While a message runs, the pump looks at its connection when it ends.
    if (this.owner === connection && !this.pumping && !this.stopped) {
      this.closeLeftOpen();
      void this.pump();
    }
  }

  /**
   * Queues, first, what ends the closed owner's state: a Sync ends an extended-query sequence
   * (and the skip after an error in it), a ROLLBACK its transaction; their answers go nowhere.
   */
  private closeLeftOpen(): void {
    const sink = this.owner!;
    if (this.queue.some((item) => item.connection === sink)) return; // already queued
    this.queue.unshift({ connection: sink, message: SYNC }, { connection: sink, message: rollbackMessage() });
  }
}
