import { CapturedLog } from './support/captured-log.js';
import { call } from './support/http.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

/**
 * The embedded database has no autovacuum: the service vacuums and analyzes its tables once
 * their changes pass autovacuum's thresholds (EMBEDDED_MAINTENANCE_SECONDS; 0 turns it off). On
 * PostgreSQL the server's autovacuum does it and the service never runs a VACUUM or ANALYZE.
 */
const embedded = !process.env.DATABASE_URL;

interface TableStats {
  n_dead_tup: number;
  last_vacuum: Date | null;
  last_analyze: Date | null;
  reltuples: number;
}

/** What PostgreSQL says of the turns' two tables. */
async function tableStats(app: TestApp): Promise<Record<'conversations' | 'responses', TableStats>> {
  const rows = await app.dataSource.query<(TableStats & { relname: string })[]>(
    `SELECT s.relname, s.n_dead_tup::int AS n_dead_tup, s.last_vacuum, s.last_analyze,
            c.reltuples::float8 AS reltuples
       FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
      WHERE s.relname IN ('conversations', 'responses')`,
  );
  const byName = new Map(rows.map((row) => [row.relname, row]));
  return { conversations: byName.get('conversations')!, responses: byName.get('responses')! };
}

/**
 * Stored turns: 8 threads of `count / 8` turns each, the threads at once. Each turn inserts its
 * response and updates its conversation (the thread's head), leaving the old row version dead.
 */
async function turns(app: TestApp, org: SeededOrganization, count: number): Promise<void> {
  const thread = async () => {
    let previous: string | undefined;
    for (let turn = 0; turn < count / 8; turn++) {
      const reply = await call(app.baseUrl, 'POST', '/v1/responses', {
        key: org.keys.assistant,
        body: { model: `asst_${org.assistantId}`, input: 'hello', previous_response_id: previous },
      });
      expect(reply.status).toBe(200);
      previous = reply.body.id;
    }
  };
  await Promise.all(Array.from({ length: 8 }, thread));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** PostgreSQL reports a table's changes about once a second: the stats after that. */
async function settledStats(app: TestApp): ReturnType<typeof tableStats> {
  await sleep(1500);
  await app.dataSource.query('SELECT 1');
  return tableStats(app);
}

describe('embedded database maintenance', () => {
  let app: TestApp | undefined;
  let log: CapturedLog;

  beforeEach(() => {
    log = new CapturedLog();
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('vacuums and analyzes the tables whose turns passed the thresholds (embedded only)', async () => {
    app = await startTestApp({ EMBEDDED_MAINTENANCE_SECONDS: '1' }, { logger: log });
    const org = await app.seedOrganization('maint');
    await turns(app, org, 80);
    if (embedded) {
      let stats = await tableStats(app);
      for (
        let attempt = 0;
        attempt < 100 && !(stats.conversations.last_vacuum && stats.responses.last_analyze);
        attempt++
      ) {
        await sleep(100);
        stats = await tableStats(app);
      }
      // 72 conversation updates: vacuumed (and analyzed); the old row versions are gone.
      expect(stats.conversations.last_vacuum).not.toBeNull();
      expect(stats.conversations.last_analyze).not.toBeNull();
      expect(stats.conversations.n_dead_tup).toBeLessThan(50);
      // 80 responses inserted: analyzed once past the threshold (50), so their statements are
      // planned on a real row count (a pass may come while the turns are still being written).
      expect(stats.responses.last_analyze).not.toBeNull();
      expect(stats.responses.reltuples).toBeGreaterThan(50);
    } else {
      // Passes would have come by now (every second in this app).
      await sleep(1500);
      const stats = await settledStats(app);
      expect(stats.conversations.last_vacuum).toBeNull();
      expect(stats.conversations.last_analyze).toBeNull();
      expect(stats.responses.last_analyze).toBeNull();
    }
    expect(log.problems.filter((line) => line.context === 'EmbeddedMaintenance')).toEqual([]);
  }, 60_000);

  it('leaves the tables alone when EMBEDDED_MAINTENANCE_SECONDS is 0', async () => {
    app = await startTestApp({ EMBEDDED_MAINTENANCE_SECONDS: '0' }, { logger: log });
    const org = await app.seedOrganization('maint-off');
    await turns(app, org, 80);
    const stats = await settledStats(app);
    expect(stats.conversations.last_vacuum).toBeNull();
    expect(stats.conversations.last_analyze).toBeNull();
    expect(stats.responses.last_analyze).toBeNull();
    if (embedded) {
      // Nothing else would: the old row versions stay, and the row count is still unknown (-1).
      expect(stats.conversations.n_dead_tup).toBeGreaterThanOrEqual(72);
      expect(stats.responses.reltuples).toBeLessThan(0);
    }
  }, 60_000);
});
