import net from 'node:net';

/**
 * A PostgreSQL wire-protocol proxy that counts what a client sends: statements (simple queries
 * and executes of the extended protocol), round trips (syncs and simple queries) and statements
 * by verb. It works the same in front of a PostgreSQL server and of the embedded database, where
 * pg_stat_statements is not available, so "database statements per turn" means the same thing
 * on both.
 */
export interface StatementCounts {
  statements: number;
  roundTrips: number;
  byVerb: Record<string, number>;
}

const SSL_REQUEST = 80877103;
const GSS_REQUEST = 80877104;

export class PgCounter {
  private counts: StatementCounts = { statements: 0, roundTrips: 0, byVerb: {} };
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<number> {
    this.server = net.createServer((client) => this.connect(client));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as net.AddressInfo).port;
  }

  /** Counts since the last reset. */
  take(): StatementCounts {
    const counts = this.counts;
    this.counts = { statements: 0, roundTrips: 0, byVerb: {} };
    return counts;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private connect(client: net.Socket): void {
    const server = net.connect(this.targetPort, this.targetHost);
    this.sockets.add(client).add(server);
    const close = () => {
      client.destroy();
      server.destroy();
      this.sockets.delete(client);
      this.sockets.delete(server);
    };
    client.on('error', close).on('close', close);
    server.on('error', close).on('close', close);
    server.pipe(client);

    let buffer: Buffer = Buffer.alloc(0);
    let startup = true;
    const named = new Map<string, string>();
    let unnamed = '';
    let portal = '';
    client.on('data', (data: Buffer) => {
      server.write(data);
      buffer = buffer.length === 0 ? data : Buffer.concat([buffer, data]);
      for (;;) {
        if (startup) {
          if (buffer.length < 8) break;
          const length = buffer.readInt32BE(0);
          if (buffer.length < length) break;
          const code = buffer.readInt32BE(4);
          buffer = buffer.subarray(length);
          // After an SSL or GSS request the real startup message follows.
          if (code !== SSL_REQUEST && code !== GSS_REQUEST) startup = false;
          continue;
        }
        if (buffer.length < 5) break;
        const length = buffer.readInt32BE(1);
        if (buffer.length < length + 1) break;
        const type = String.fromCharCode(buffer[0]);
        const body = buffer.subarray(5, length + 1);
        buffer = buffer.subarray(length + 1);
        if (type === 'Q') {
          this.count(cString(body, 0).text);
          this.counts.roundTrips++;
        } else if (type === 'P') {
          const name = cString(body, 0);
          const text = cString(body, name.next).text;
          if (name.text) named.set(name.text, text);
          else unnamed = text;
        } else if (type === 'B') {
          const portalName = cString(body, 0);
          const statement = cString(body, portalName.next).text;
          portal = statement ? (named.get(statement) ?? '') : unnamed;
        } else if (type === 'E') {
          this.count(portal);
        } else if (type === 'S') {
          this.counts.roundTrips++;
        }
      }
    });
    client.on('end', () => server.end());
  }

  private count(text: string): void {
    this.counts.statements++;
    const verb = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? '?';
    const key = verb === 'START' ? 'BEGIN' : verb;
    this.counts.byVerb[key] = (this.counts.byVerb[key] ?? 0) + 1;
  }
}

function cString(buffer: Buffer, offset: number): { text: string; next: number } {
  const end = buffer.indexOf(0, offset);
  const stop = end < 0 ? buffer.length : end;
  return { text: buffer.toString('utf8', offset, stop), next: stop + 1 };
}
