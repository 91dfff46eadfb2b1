import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP proxy that injects faults between the service and a dependency (PostgreSQL,
 * Redis, the model's HTTP server), at the transport level the real outage would hit:
 *
 * - `refuse()`: the listener closes and open connections are reset (the server is down);
 * - `reset()`: open connections are reset now, new ones as soon as they send (resets mid-query);
 * - `stall()`: nothing is forwarded either way; connections stay open (a partition);
 * - `slow(ms)`: every chunk is forwarded `ms` later, in order;
 * - `loseReplyTo(marker)`: the next request whose bytes hold `marker` reaches the server, but its
 *   reply is swallowed up to the server's ReadyForQuery (the statement committed) and the
 *   connection is then reset: a commit whose answer was lost;
 * - `normal()`: back to plain forwarding, on the same port; stalled bytes flow again.
 */
/** PostgreSQL's ReadyForQuery message: 'Z', length 5 (its status byte follows). */
const READY_FOR_QUERY = Buffer.from([0x5a, 0, 0, 0, 5]);

export class FaultProxy {
  private server: Server | undefined;
  private mode: 'normal' | 'refuse' | 'reset' | 'stall' | 'slow' = 'normal';
  private delayMs = 0;
  private readonly pairs = new Set<{ client: Socket; upstream: Socket }>();
  /** The marker armed by `loseReplyTo`, and the connection whose reply is being swallowed. */
  private loseMarker: Buffer | undefined;
  private losing: { client: Socket; upstream: Socket } | undefined;
  /** How many replies `loseReplyTo` swallowed. */
  lostReplies = 0;
  port = 0;

  constructor(
    private readonly targetPort: number,
    private readonly targetHost = '127.0.0.1',
  ) {}

  /** Listens on a free loopback port; `url` is then the target's address through the proxy. */
  async start(): Promise<this> {
    await this.listen(0);
    return this;
  }

  /** The target URL with its host and port replaced by the proxy's. */
  rewrite(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  async normal(): Promise<void> {
    this.mode = 'normal';
    this.delayMs = 0;
    if (!this.server) await this.listen(this.port);
    for (const { client, upstream } of this.pairs) {
      client.resume();
      upstream.resume();
    }
  }

  async refuse(): Promise<void> {
    this.mode = 'refuse';
    const server = this.server;
    this.server = undefined;
    this.resetAll();
    if (server) await new Promise<void>((done) => server.close(() => done()));
  }

  reset(): void {
    this.mode = 'reset';
    this.resetAll();
  }

  stall(): void {
    this.mode = 'stall';
    for (const { client, upstream } of this.pairs) {
      client.pause();
      upstream.pause();
    }
  }

  loseReplyTo(marker: string): void {
    this.loseMarker = Buffer.from(marker);
  }

  slow(delayMs: number): void {
    this.mode = 'slow';
    this.delayMs = delayMs;
  }

  async close(): Promise<void> {
    await this.refuse();
  }

  private async listen(port: number): Promise<void> {
    const server = createServer((client) => this.accept(client));
    await new Promise<void>((done, fail) => {
      server.once('error', fail);
      server.listen(port, '127.0.0.1', () => done());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  private accept(client: Socket): void {
    const upstream = connect(this.targetPort, this.targetHost);
    const pair = { client, upstream };
    this.pairs.add(pair);
    const forget = () => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', forget).on('close', forget);
    upstream.on('error', forget).on('close', forget);
    this.forward(client, upstream, pair);
    this.forward(upstream, client, pair);
    if (this.mode === 'stall') {
      client.pause();
      upstream.pause();
    }
  }

  private forward(from: Socket, to: Socket, pair: { client: Socket; upstream: Socket }): void {
    // One chain per direction keeps chunks in order when some are delayed.
    let chain = Promise.resolve();
    from.on('data', (chunk: Buffer) => {
      if (this.mode === 'reset') {
        this.resetPair(pair);
        return;
      }
      if (this.loseMarker && from === pair.client && chunk.includes(this.loseMarker)) {
        this.loseMarker = undefined;
        this.losing = pair;
      } else if (this.losing === pair && from === pair.upstream) {
        // The server's answer is dropped; once it said ReadyForQuery, the statement is committed.
        if (chunk.includes(READY_FOR_QUERY)) {
          this.losing = undefined;
          this.lostReplies += 1;
          this.resetPair(pair);
        }
        return;
      }
      const delay = this.mode === 'slow' ? this.delayMs : 0;
      chain = chain.then(async () => {
        if (delay > 0) await new Promise((done) => setTimeout(done, delay));
        if (!to.destroyed) to.write(chunk);
      });
    });
    from.on('end', () => void chain.then(() => to.end()));
  }

  private resetAll(): void {
    for (const pair of this.pairs) this.resetPair(pair);
  }

  private resetPair(pair: { client: Socket; upstream: Socket }): void {
    this.pairs.delete(pair);
    // An RST, as a crashed server or a dropped NAT entry gives, not a polite FIN.
    for (const socket of [pair.client, pair.upstream]) {
      if (socket.destroyed) continue;
      if (socket.connecting) socket.destroy();
      else socket.resetAndDestroy();
    }
  }
}
