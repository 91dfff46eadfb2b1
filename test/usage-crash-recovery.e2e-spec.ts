import { buildService, startService, type ServiceBuild } from './support/built-service.js';
import { call } from './support/http.js';
import { parseSse } from './support/sse.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';
import type { TestDatabase } from './support/test-database.js';

/**
 * Usage is added to the rollups by a replica's flush, off the turn's own statement (docs/usage.md,
 * "Freshness"). A replica killed before its flush leaves its turns' usage at rest in
 * `usage_pending`; a replica that starts later adds it, exactly once, however often it restarts.
 * The killed replica is a child process; the database (embedded or a server) outlives it.
 */
describe('usage left pending by a replica killed with kill -9 before its flush', () => {
  let build: ServiceBuild;
  let database: TestDatabase;
  let org: SeededOrganization;

  beforeAll(async () => {
    build = await buildService();
    const seeding = await startTestApp();
    org = await seeding.seedOrganization('crashed-usage');
    database = seeding.database;
    // The child process takes the database over (an embedded one has one owner at a time).
    await seeding.stop();
  }, 180_000);

  afterAll(async () => {
    await database?.drop();
  });

  /** The organization's usage as the rows at rest hold it. */
  async function atRest(app: TestApp, organizationId = org.id) {
    const [row] = await app.dataSource.query<
      { pending: number; daily_turns: number; daily_input: number; daily_output: number }[]
    >(
      `SELECT (SELECT count(*)::int FROM usage_pending WHERE organization_id = $1) AS pending,
              (SELECT coalesce(sum(turns), 0)::int FROM usage_daily WHERE organization_id = $1) AS daily_turns,
              (SELECT coalesce(sum(input_tokens), 0)::int FROM usage_daily WHERE organization_id = $1) AS daily_input,
              (SELECT coalesce(sum(output_tokens), 0)::int FROM usage_daily WHERE organization_id = $1) AS daily_output`,
      [organizationId],
    );
    return row;
  }

  it('adds the rows at rest once at the next boot, and never again at the ones after', async () => {
    // No timed flush and no orphan pass while the victim runs: its turns' usage stays pending.
    const victim = await startService(build, {
      ...database.env,
      USAGE_FLUSH_MS: '60000',
      USAGE_ORPHAN_AFTER_MS: '86400000',
    });
    const spent = { turns: 0, input: 0, output: 0 };
    try {
      for (const input of ['first question', 'second question', 'third question']) {
        const reply = await call(victim.baseUrl, 'POST', '/v1/responses', {
          key: org.keys.full_access,
          body: { model: `asst_${org.assistantId}`, input },
        });
        expect(reply.status).toBe(200);
        spent.turns += 1;
        spent.input += reply.body.usage.input_tokens;
        spent.output += reply.body.usage.output_tokens;
      }
      const streamed = await call(victim.baseUrl, 'POST', '/v1/responses', {
        key: org.keys.full_access,
        body: { model: `asst_${org.assistantId}`, input: 'a streamed question', stream: true },
      });
      const completed = parseSse(streamed.body).events.find((event) => event.event === 'response.completed');
      expect(completed?.json.response.usage.input_tokens).toBeGreaterThan(0);
      spent.turns += 1;
      spent.input += completed?.json.response.usage.input_tokens;
      spent.output += completed?.json.response.usage.output_tokens;
    } finally {
      victim.child.kill('SIGKILL');
      await victim.exit;
    }

    // At rest: four turns' usage pending, none in the rollups. A replica that boots while the
    // rows are younger than USAGE_ORPHAN_AFTER_MS leaves them (their replica may still flush).
    const early = await startTestApp({ USAGE_ORPHAN_AFTER_MS: '86400000' }, { reuse: database });
    try {
      expect(await atRest(early)).toEqual({ pending: 4, daily_turns: 0, daily_input: 0, daily_output: 0 });
    } finally {
      await early.stop();
    }

    // Past USAGE_ORPHAN_AFTER_MS (0 here), a booting replica adds them; the next boots add nothing.
    for (const boot of ['first', 'second']) {
      const app = await startTestApp({ USAGE_ORPHAN_AFTER_MS: '0' }, { reuse: database });
      try {
        const report = await call(app.baseUrl, 'GET', '/admin/v1/usage', { key: org.keys.admin });
        expect({ boot, status: report.status, total: report.body.total }).toMatchObject({
          boot,
          status: 200,
          total: {
            turns: spent.turns,
            input_tokens: spent.input,
            output_tokens: spent.output,
            total_tokens: spent.input + spent.output,
          },
        });
        expect(await atRest(app)).toEqual({
          pending: 0,
          daily_turns: spent.turns,
          daily_input: spent.input,
          daily_output: spent.output,
        });
      } finally {
        await app.stop();
      }
    }
  }, 180_000);

  it('flushes on a graceful stop: nothing is left pending for another replica', async () => {
    const quiet = { USAGE_FLUSH_MS: '60000', USAGE_ORPHAN_AFTER_MS: '86400000' };
    const first = await startTestApp(quiet, { reuse: database });
    let stopping: SeededOrganization;
    try {
      stopping = await first.seedOrganization('stopped-usage');
      const reply = await call(first.baseUrl, 'POST', '/v1/responses', {
        key: stopping.keys.full_access,
        body: { model: `asst_${stopping.assistantId}`, input: 'a question before the stop' },
      });
      expect(reply.status).toBe(200);
      expect(await atRest(first, stopping.id)).toMatchObject({ pending: 1, daily_turns: 0 });
    } finally {
      await first.stop();
    }
    const next = await startTestApp(quiet, { reuse: database });
    try {
      expect(await atRest(next, stopping.id)).toMatchObject({ pending: 0, daily_turns: 1 });
    } finally {
      await next.stop();
    }
  }, 120_000);
});
