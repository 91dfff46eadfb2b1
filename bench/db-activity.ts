import pg from 'pg';

/**
 * Where the database's sessions spend a measurement window: pg_stat_activity sampled every 50 ms
 * for the bench database(s), each client backend counted as on the CPU (active, no wait event),
 * waiting on a named event (`Lock:transactionid`, `Lock:tuple`, `LWLock:WALWrite`, `IO:WALSync`,
 * …) or idle in a transaction. Averaged over the samples this is the "average active sessions"
 * by wait event: lock waits on shared rows show as `Lock:*`, commit flushes as `IO:WALSync`.
 * The persisting relay's backends (by application_name) are counted apart from the service's.
 */

export type SessionWaits = Record<string, number>;

export interface ActivityWindow {
  samples: number;
  /** Summed over samples; divide by samples for the average sessions in each state. */
  service: SessionWaits;
  relayPg: SessionWaits;
}

const EVERY_MS = 50;

export class DbActivitySampler {
  private timer: NodeJS.Timeout | undefined;
  private window: ActivityWindow | undefined;
  private busy = false;

  private constructor(
    private readonly client: pg.Client,
    private readonly databases: string[],
    private readonly relayApplication: string,
  ) {}

  static async open(serverUrl: string, databases: string[], relayApplication: string) {
    const client = new pg.Client({ connectionString: serverUrl, application_name: 'bench-activity' });
    await client.connect();
    return new DbActivitySampler(client, databases, relayApplication);
  }

  start(): void {
    this.stop();
    this.window = { samples: 0, service: {}, relayPg: {} };
    this.timer = setInterval(() => void this.sample(), EVERY_MS);
  }

  stop(): ActivityWindow | undefined {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const window = this.window;
    this.window = undefined;
    return window;
  }

  async close(): Promise<void> {
    this.stop();
    await this.client.end().catch(() => undefined);
  }

  private async sample(): Promise<void> {
    const window = this.window;
    if (!window || this.busy) return;
    this.busy = true;
    try {
      const rows = await this.client.query<{
        app: string;
        state: string;
        type: string | null;
        event: string | null;
      }>(
        `SELECT application_name AS app, state, wait_event_type AS type, wait_event AS event
           FROM pg_stat_activity
          WHERE datname = ANY($1) AND backend_type = 'client backend' AND pid <> pg_backend_pid()
            AND state IN ('active', 'idle in transaction')`,
        [this.databases],
      );
      if (this.window !== window) return;
      window.samples++;
      for (const row of rows.rows) {
        const into = row.app === this.relayApplication ? window.relayPg : window.service;
        const key =
          row.state !== 'active' ? 'idle in transaction' : row.type ? `${row.type}:${row.event}` : 'CPU';
        into[key] = (into[key] ?? 0) + 1;
      }
    } catch {
      // A sample lost is a sample lost: the window's average stands on the others.
    } finally {
      this.busy = false;
    }
  }
}
