import net from 'node:net';
import { performance } from 'node:perf_hooks';

/**
 * A PostgreSQL wire-protocol proxy that counts what a client sends: statements (simple queries
 * and executes of the extended protocol), round trips (syncs and simple queries) and statements
 * by verb. It works the same in front of a PostgreSQL server and of the embedded database, where
 * pg_stat_statements is not available, so "database statements per turn" means the same thing
 * on both. It also reads the server's answers, so each distinct statement gets its calls, the rows
 * its command tag reports (`INSERT 0 1`, `UPDATE 1`, `SELECT 3`) and the time from its send to its
 * completion (wall time on a shared machine: only a ranking, never a cost).
 */
export interface StatementCounts {
  statements: number;
  roundTrips: number;
  byVerb: Record<string, number>;
  /** Per distinct statement text (whitespace collapsed). */
  byStatement: Record<string, StatementStats>;
}

export interface StatementStats {
  /** Name the service prepared it under (per-connection suffix removed), if any. */
  name: string | null;
  calls: number;
  rows: number;
  errors: number;
  ms: number;
}

interface Pending {
  kind: 'statement' | 'simple' | 'sync';
  key: string;
  sentAt: number;
}

const SSL_REQUEST = 80877103;
const GSS_REQUEST = 80877104;

export class PgCounter {
  private counts = empty();
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
    this.counts = empty();
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

    const pending: Pending[] = [];
    /** Single-byte answers to SSL/GSS requests the server still owes. */
    let rawBytes = 0;
    let lastAnswer = 0;
    this.readClient(client, server, pending, () => rawBytes++);

    let buffer: Buffer = Buffer.alloc(0);
    server.on('data', (data: Buffer) => {
      client.write(data);
      buffer = buffer.length === 0 ? data : Buffer.concat([buffer, data]);
      const now = performance.now();
      while (rawBytes > 0 && buffer.length > 0) {
        rawBytes--;
        buffer = buffer.subarray(1);
      }
      for (;;) {
        if (buffer.length < 5) break;
        const length = buffer.readInt32BE(1);
        if (buffer.length < length + 1) break;
        const type = String.fromCharCode(buffer[0]);
        const body = buffer.subarray(5, length + 1);
        buffer = buffer.subarray(length + 1);
        const front = pending[0];
        if (type === 'C' || type === 'I' || type === 's') {
          if (!front || front.kind === 'sync') continue;
          const tag = type === 'C' ? cString(body, 0).text : '';
          const rows = /(\d+)$/.exec(tag);
          this.complete(
            front.key,
            rows ? Number(rows[1]) : 0,
            now - Math.max(front.sentAt, lastAnswer),
            false,
          );
          lastAnswer = now;
          if (front.kind === 'statement') pending.shift();
        } else if (type === 'E') {
          if (!front) continue;
          if (front.kind !== 'sync')
            this.complete(front.key, 0, now - Math.max(front.sentAt, lastAnswer), true);
          // After an error the server skips the rest of the extended batch, up to its sync.
          while (pending[0]?.kind === 'statement') pending.shift();
          if (pending[0]?.kind === 'simple') pending.shift();
        } else if (type === 'Z') {
          while (pending[0]?.kind === 'statement') pending.shift();
          if (pending[0]) pending.shift();
          lastAnswer = now;
        }
      }
    });
  }

  /** Parses what the client sends: counts statements and queues what the server will answer. */
  private readClient(
    client: net.Socket,
    server: net.Socket,
    pending: Pending[],
    onRawRequest: () => void,
  ): void {
    let buffer: Buffer = Buffer.alloc(0);
    let startup = true;
    const named = new Map<string, { text: string; name: string }>();
    let unnamed = { text: '', name: '' };
    let portal = { text: '', name: '' };
    client.on('data', (data: Buffer) => {
      server.write(data);
      buffer = buffer.length === 0 ? data : Buffer.concat([buffer, data]);
      const now = performance.now();
      for (;;) {
        if (startup) {
          if (buffer.length < 8) break;
          const length = buffer.readInt32BE(0);
          if (buffer.length < length) break;
          const code = buffer.readInt32BE(4);
          buffer = buffer.subarray(length);
          // After an SSL or GSS request the real startup message follows.
          if (code !== SSL_REQUEST && code !== GSS_REQUEST) startup = false;
          else onRawRequest();
          continue;
        }
        if (buffer.length < 5) break;
        const length = buffer.readInt32BE(1);
        if (buffer.length < length + 1) break;
        const type = String.fromCharCode(buffer[0]);
        const body = buffer.subarray(5, length + 1);
        buffer = buffer.subarray(length + 1);
        if (type === 'Q') {
          const text = cString(body, 0).text;
          this.count(text, '');
          this.counts.roundTrips++;
          pending.push({ kind: 'simple', key: normalize(text), sentAt: now });
        } else if (type === 'P') {
          const name = cString(body, 0);
          const text = cString(body, name.next).text;
          const entry = { text, name: name.text };
          if (name.text) named.set(name.text, entry);
          else unnamed = entry;
        } else if (type === 'B') {
          const portalName = cString(body, 0);
          const statement = cString(body, portalName.next).text;
          portal = statement ? (named.get(statement) ?? { text: '', name: statement }) : unnamed;
        } else if (type === 'E') {
          this.count(portal.text, portal.name);
          pending.push({ kind: 'statement', key: normalize(portal.text), sentAt: now });
        } else if (type === 'S') {
          this.counts.roundTrips++;
          pending.push({ kind: 'sync', key: '', sentAt: now });
        }
      }
    });
    client.on('end', () => server.end());
  }

  private count(text: string, name: string): void {
    this.counts.statements++;
    const verb = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? '?';
    const key = verb === 'START' ? 'BEGIN' : verb;
    this.counts.byVerb[key] = (this.counts.byVerb[key] ?? 0) + 1;
    const stats = this.statement(normalize(text));
    stats.calls++;
    // The service names its prepared statements `<name>_<process tag>_<serial>` (prepared-query.ts).
    if (name && stats.name === null) stats.name = name.replace(/_[0-9a-f]{8}_\d+$/, '');
  }

  private complete(key: string, rows: number, ms: number, failed: boolean): void {
    const stats = this.statement(key);
    stats.rows += rows;
    stats.ms += Math.max(0, ms);
    if (failed) stats.errors++;
  }

  private statement(key: string): StatementStats {
    return (this.counts.byStatement[key] ??= { name: null, calls: 0, rows: 0, errors: 0, ms: 0 });
  }
}

function empty(): StatementCounts {
  return { statements: 0, roundTrips: 0, byVerb: {}, byStatement: {} };
}

function normalize(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function cString(buffer: Buffer, offset: number): { text: string; next: number } {
  const end = buffer.indexOf(0, offset);
  const stop = end < 0 ? buffer.length : end;
  return { text: buffer.toString('utf8', offset, stop), next: stop + 1 };
}
