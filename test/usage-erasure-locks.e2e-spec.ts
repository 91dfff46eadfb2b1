import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { DataSource, QueryRunner } from 'typeorm';
import { TransactionalConnection } from '../src/database/transactional-connection.js';
import { OrganizationEntity } from '../src/organizations/entities/organization.entity.js';
import { TurnStore } from '../src/responses/store/turn-store.repository.js';
import { UsageRollups } from '../src/usage/usage-rollups.repository.js';
import { call } from './support/http.js';
import { openTestDataSource, type TestDataSource } from './support/test-data-source.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';
import { createTestDatabase } from './support/test-database.js';

const serverUrl = process.env.DATABASE_URL;

/**
 * The erasure of a user (TurnStore.eraseUserHistory, in the erasure's transaction) and the usage
 * flush (UsageRollups.flush, one statement) both lock `usage_pending` rows, then `usage_daily`
 * rows, then `usage_hourly` rows. Each takes the rows of a table in key order (docs/usage.md,
 * "Erasure and the flush"), so neither can hold a row the other waits for while waiting for one
 * the other holds: no deadlock (40P01). A third transaction holds one rollup row so that the two
 * run into each other deterministically: the erasure asks for it first, the flush comes second.
 * PostgreSQL only: the embedded database runs one statement at a time, it cannot deadlock.
 */
(serverUrl ? describe : describe.skip)(
  'user erasure and the usage flush lock rollup rows in one order (needs DATABASE_URL)',
  () => {
    let database: TestDataSource;
    let dataSource: DataSource;
    let store: TurnStore;
    let rollups: UsageRollups;
    let connection: TransactionalConnection;
    const assistant = randomUUID();
    const key = randomUUID();
    const days = ['2026-11-02', '2026-11-03'];

    beforeAll(async () => {
      database = await openTestDataSource();
      dataSource = database.dataSource;
      // The plan a busy table gets: the flush finds its few turns among many by walking the
      // primary key (in key order), not by a bitmap (in heap order). Set for the connections
      // opened from here on: the pool is opened again.
      await dataSource.query(
        `DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET enable_bitmapscan = off', current_database()); END $$`,
      );
      await dataSource.destroy();
      await dataSource.initialize();
      store = new TurnStore(dataSource);
      rollups = new UsageRollups(dataSource);
      connection = new TransactionalConnection(dataSource);
    });
    afterAll(() => database?.close());

    async function organization(): Promise<string> {
      const id = randomUUID();
      await dataSource
        .getRepository(OrganizationEntity)
        .insert({ id, slug: `o-${id}`, name: 'O', rateLimitPerMinute: null, createdAt: new Date() });
      return id;
    }

    /** A rollup row of `user` (`''`: anonymous) for `day` (its hour: noon), one turn of 10 input tokens. */
    async function rollupRow(table: 'usage_daily' | 'usage_hourly', org: string, day: string, user: string) {
      const [column, value] = table === 'usage_daily' ? ['day', day] : ['hour', `${day}T12:00:00Z`];
      const model = table === 'usage_daily' ? '' : `, model`;
      await dataSource.query(
        `INSERT INTO ${table} (organization_id, ${column}, assistant_id, specialist, api_key_id, user_id${model},
                               currency, turns, input_tokens)
         VALUES ($1, $2, $3, '', $4, $5${table === 'usage_daily' ? '' : `, ''`}, '', 1, 10)`,
        [org, value, assistant, key, user],
      );
    }

    /** An anonymous turn's usage waiting for the flush, completed at noon of `day`. */
    async function pending(org: string, day: string, user = '', id = randomUUID()): Promise<string> {
      await dataSource.query(
        `INSERT INTO usage_pending (response_id, organization_id, completed_at, assistant_id, specialist, api_key_id,
                                    user_id, usage_rows)
         VALUES ($1, $2, $3, $4, '', $5, $6, $7)`,
        [
          id,
          org,
          `${day}T12:00:00Z`,
          assistant,
          key,
          user,
          JSON.stringify([
            {
              model: '',
              currency: '',
              turns: 1,
              input_tokens: 10,
              cached_tokens: 0,
              output_tokens: 0,
              reasoning_tokens: 0,
              cost: 0,
            },
          ]),
        ],
      );
      return id;
    }

    /** Statements of this database waiting for a lock, now. */
    async function waiting(): Promise<number> {
      const [row] = await dataSource.query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      return row.n;
    }

    async function untilWaiting(count: number): Promise<void> {
      const deadline = Date.now() + 10_000;
      while ((await waiting()) < count) {
        if (Date.now() > deadline) throw new Error(`never ${count} statements waiting for a lock`);
        await new Promise((done) => setTimeout(done, 10));
      }
    }

    /**
     * The erasure, planned as on a table too large for an index scan to pay: its rows come in
     * heap order, not key order (on these few rows the planner would walk the primary key).
     */
    function erase(org: string): Promise<unknown> {
      return connection.withTransaction(async (manager) => {
        await manager.query('SET LOCAL enable_indexscan = off');
        await manager.query('SET LOCAL enable_bitmapscan = off');
        return store.eraseUserHistory(manager, org, 'alice');
      });
    }

    /**
     * While another transaction holds one row (`hold`), the erasure of alice starts and waits
     * for it, then the flush of `turns` (stored by then) starts and waits too; then the row is let
     * go. Both finish.
     */
    async function meet(
      org: string,
      hold: [string, unknown[]],
      stored: string[] | (() => Promise<string[]>),
    ): Promise<void> {
      const holder: QueryRunner = dataSource.createQueryRunner();
      await holder.connect();
      await holder.startTransaction();
      let erasure: Promise<unknown> | undefined;
      let flush: Promise<number> | undefined;
      let turns: string[] | undefined;
      try {
        await holder.query(...hold);
        erasure = erase(org);
        await untilWaiting(1);
        turns = Array.isArray(stored) ? stored : await stored();
        flush = rollups.flush(turns);
        await untilWaiting(2);
      } finally {
        await holder.commitTransaction();
        await holder.release();
      }
      const [erased, flushed] = await Promise.allSettled([erasure, flush]);
      expect(erased.status).toBe('fulfilled');
      expect(flushed).toEqual({ status: 'fulfilled', value: turns?.length });
    }

    it.each(['usage_daily', 'usage_hourly'] as const)(
      'an erasure and a flush that meet on %s rows both finish, and every turn is counted once',
      async (table) => {
        const org = await organization();
        // The erased user's rows, the later day first in the heap: unordered, an erasure would
        // move that one first. The anonymous rows they fold into, which the flush adds to as well.
        await rollupRow(table, org, days[1], 'alice');
        await rollupRow(table, org, days[0], 'alice');
        for (const day of days) await rollupRow(table, org, day, '');
        const turns = [await pending(org, days[0]), await pending(org, days[1])];

        const column = table === 'usage_daily' ? 'day' : `(hour AT TIME ZONE 'UTC')::date`;
        // The anonymous row of the later day is held: the erasure waits for it first, then the
        // flush of both days' anonymous turns comes.
        await meet(
          org,
          [
            `SELECT 1 FROM ${table} WHERE organization_id = $1 AND user_id = '' AND ${column} = $2 FOR UPDATE`,
            [org, days[1]],
          ],
          turns,
        );

        // Each anonymous row: its own turn, alice's folded in, the flushed one.
        const rows = await dataSource.query<{ day: string; user_id: string; turns: number; input: number }[]>(
          `SELECT to_char(${column}, 'YYYY-MM-DD') AS day, user_id, turns::int AS turns, input_tokens::int AS input
             FROM ${table} WHERE organization_id = $1 ORDER BY 1, 2`,
          [org],
        );
        expect(rows).toEqual(days.map((day) => ({ day, user_id: '', turns: 3, input: 30 })));
        const [{ left }] = await dataSource.query<{ left: number }[]>(
          'SELECT count(*)::int AS left FROM usage_pending WHERE organization_id = $1',
          [org],
        );
        expect(left).toBe(0);
      },
    );

    it.each(['usage_daily', 'usage_hourly'] as const)(
      "an erasure and a flush of the user's turns stored meanwhile, meeting on the user's %s rows, both finish",
      async (table) => {
        const org = await organization();
        // Alice's rows, the later day first in the heap: the erasure, reading the heap, would
        // delete that one first, and the flush adds to the earlier one first (key order).
        await rollupRow(table, org, days[1], 'alice');
        await rollupRow(table, org, days[0], 'alice');
        const column = table === 'usage_daily' ? 'day' : `(hour AT TIME ZONE 'UTC')::date`;
        // Alice's later-day row is held: the erasure waits for it. Then two turns of alice are
        // stored (after the erasure folded her pending usage), and their flush comes.
        await meet(
          org,
          [
            `SELECT 1 FROM ${table} WHERE organization_id = $1 AND user_id = 'alice' AND ${column} = $2 FOR UPDATE`,
            [org, days[1]],
          ],
          () => Promise.all(days.map((day) => pending(org, day, 'alice'))),
        );

        // Alice's rows folded into the anonymous ones; the turns flushed after the erasure are hers.
        const rows = await dataSource.query<{ day: string; user_id: string; turns: number; input: number }[]>(
          `SELECT to_char(${column}, 'YYYY-MM-DD') AS day, user_id, turns::int AS turns, input_tokens::int AS input
             FROM ${table} WHERE organization_id = $1 ORDER BY 1, 2`,
          [org],
        );
        expect(rows).toEqual(
          days.flatMap((day) => [
            { day, user_id: '', turns: 1, input: 10 },
            { day, user_id: 'alice', turns: 1, input: 10 },
          ]),
        );
      },
    );

    it("an erasure and a flush that meet on the user's pending turns both finish; the turns count as anonymous", async () => {
      const org = await organization();
      // Two of alice's turns pending, the one with the greater id first in the heap; other
      // organizations' turns around them, so that the flush finds its own by their key (in key
      // order) while the erasure, which has no index on the user, reads the heap.
      const [low, high] = [randomUUID(), randomUUID()].sort();
      const other = await organization();
      await dataSource.query(
        `INSERT INTO usage_pending (response_id, organization_id, completed_at, assistant_id, specialist, api_key_id,
                                    user_id, usage_rows)
         SELECT gen_random_uuid(), $1, now(), $2, '', $3, 'bob', '[]' FROM generate_series(1, 2000)`,
        [other, assistant, key],
      );
      await dataSource.query('ANALYZE usage_pending');
      await pending(org, days[0], 'alice', high);
      await pending(org, days[0], 'alice', low);
      await meet(org, ['SELECT 1 FROM usage_pending WHERE response_id = $1 FOR UPDATE', [high]], [low, high]);
      const rows = await dataSource.query<{ user_id: string; turns: number }[]>(
        'SELECT user_id, turns::int AS turns FROM usage_daily WHERE organization_id = $1',
        [org],
      );
      expect(rows).toEqual([{ user_id: '', turns: 2 }]);
    });
  },
);

(serverUrl ? describe : describe.skip)('a deadlock answers 503 with Retry-After (needs DATABASE_URL)', () => {
  let app: TestApp;
  let org: SeededOrganization;

  beforeAll(async () => {
    // The service's connections check for a deadlock 3 s into a wait (the server's default is
    // 1 s): time enough for the test's transaction to close the cycle, even on a loaded machine.
    const database = await createTestDatabase();
    const name = new URL(database.url as string).pathname.slice(1);
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    await admin.query(`ALTER DATABASE ${name} SET deadlock_timeout = '3s'`);
    await admin.end();
    app = await startTestApp({}, { reuse: database });
    org = await app.seedOrganization('deadlock');
  });
  afterAll(() => app?.close());

  it('an erasure chosen as a deadlock victim: 503 service_unavailable, Retry-After, nothing erased', async () => {
    const usage = (user: string) =>
      app.dataSource.query(
        `INSERT INTO usage_daily (organization_id, day, assistant_id, specialist, api_key_id, user_id, currency, turns)
         VALUES ($1, '2026-11-02', $2, '', $2, $3, '', 1)`,
        [org.id, org.assistantId, user],
      );
    await usage('alice');
    await usage('');
    const pendingId = randomUUID();
    await app.dataSource.query(
      `INSERT INTO usage_pending (response_id, organization_id, completed_at, assistant_id, specialist, api_key_id,
                                  user_id, usage_rows)
       VALUES ($1, $2, now(), $3, '', $3, 'alice', '[]')`,
      [pendingId, org.id, org.assistantId],
    );
    // Another transaction holds the anonymous row the erasure folds alice's usage into…
    const other = app.dataSource.createQueryRunner();
    await other.connect();
    await other.startTransaction();
    try {
      // This transaction never looks for the deadlock itself: the erasure, waiting first, does.
      await other.query(`SET LOCAL deadlock_timeout = '60s'`);
      await other.query(`SELECT 1 FROM usage_daily WHERE organization_id = $1 AND user_id = '' FOR UPDATE`, [
        org.id,
      ]);
      const erasure = call(app.baseUrl, 'DELETE', `/admin/v1/organizations/${org.slug}/users/alice`, {
        key: org.keys.admin,
      });
      const deadline = Date.now() + 10_000;
      for (;;) {
        const [{ n }] = await app.dataSource.query<{ n: number }[]>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        if (n > 0) break;
        if (Date.now() > deadline) throw new Error('the erasure never waited');
        await new Promise((done) => setTimeout(done, 10));
      }
      // …and then wants alice's pending turn, which the waiting erasure holds: a deadlock, which
      // the erasure finds, and is rolled back for.
      await other.query(`UPDATE usage_pending SET specialist = '' WHERE response_id = $1`, [pendingId]);
      const reply = await erasure;
      expect(reply.status).toBe(503);
      expect(reply.body).toEqual({
        error: { type: 'server_error', code: 'service_unavailable', message: expect.any(String) },
      });
      expect(reply.body.error.message).not.toMatch(/deadlock|usage_|SELECT|UPDATE/);
      expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    } finally {
      await other.rollbackTransaction();
      await other.release();
    }
    // Rolled back whole: alice's usage is still hers.
    const [{ n }] = await app.dataSource.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM usage_daily WHERE organization_id = $1 AND user_id = 'alice'`,
      [org.id],
    );
    expect(n).toBe(1);
  });
});
