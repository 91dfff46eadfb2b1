import pg from 'pg';
import { UsageFlusher } from '../src/usage/usage-flusher.service.js';
import { UsageRollups } from '../src/usage/usage-rollups.repository.js';
import { call, type ApiReply as Reply } from './support/http.js';
import { insertPendingTurn } from './support/pending-usage.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

/**
 * The usage report counts the rolled-up usage and the turns still pending (usage_pending),
 * whichever replica stored them, in one statement, and waits for no flush (docs/usage.md,
 * "Freshness"). The timer flush does not run within a test (USAGE_FLUSH_MS: a minute).
 */
describe('the usage report counts pending usage without waiting for a flush', () => {
  let app: TestApp;
  /** A client holding a lock on usage_pending, ended before the app is closed. */
  let locker: pg.Client | undefined;

  beforeAll(async () => {
    app = await startTestApp({ USAGE_FLUSH_MS: '60000' });
  });

  afterAll(async () => {
    await locker?.end();
    await app?.close();
  });

  const today = () => new Date().toISOString().slice(0, 10);
  const ask = async (org: SeededOrganization, input: string) => {
    const reply = await call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.full_access,
      body: { model: `asst_${org.assistantId}`, input },
    });
    expect(reply.status).toBe(200);
    return reply.body.usage as { input_tokens: number; output_tokens: number };
  };
  const report = async (key: string, query = ''): Promise<Reply> => {
    const reply = await call(app.baseUrl, 'GET', `/admin/v1/usage?from=${today()}&to=${today()}${query}`, {
      key,
    });
    expect(reply.status).toBe(200);
    return reply;
  };

  it("counts rolled-up and pending turns, this replica's and another's, each once", async () => {
    const org = await app.seedOrganization('report-pending');
    const adminKey = await app.createKey(org.id, ['admin']);
    const rolledUp = await ask(org, 'one two three');
    await app.running.app.get(UsageFlusher).flush();
    // This replica's turn, pending until its flush.
    const pending = await ask(org, 'four five');
    // Another replica's turn, pending until that replica's flush (or an orphan pass).
    await insertPendingTurn(app.dataSource, {
      organizationId: org.id,
      assistantId: org.assistantId,
      at: new Date(),
      inputTokens: 4,
      outputTokens: 3,
      model: 'other-model',
    });
    // A pending turn outside the range does not count.
    await insertPendingTurn(app.dataSource, {
      organizationId: org.id,
      assistantId: org.assistantId,
      at: new Date(Date.now() - 3 * 86_400_000),
      inputTokens: 500,
      outputTokens: 500,
    });
    // Another organization's pending turn, in the range: not in this organization's report.
    const other = await app.seedOrganization('report-pending-other');
    await insertPendingTurn(app.dataSource, {
      organizationId: other.id,
      assistantId: other.assistantId,
      at: new Date(),
      inputTokens: 7000,
      outputTokens: 7000,
      model: 'another-org-model',
    });
    const expected = {
      turns: 3,
      input_tokens: rolledUp.input_tokens + pending.input_tokens + 4,
      output_tokens: rolledUp.output_tokens + pending.output_tokens + 3,
    };
    expect((await report(adminKey)).body.total).toMatchObject(expected);
    const byModel = (await report(adminKey, '&group_by=model')).body.data as Record<string, unknown>[];
    expect(byModel).toContainEqual(
      expect.objectContaining({ model: 'other-model', turns: 1, input_tokens: 4 }),
    );
    expect(byModel).not.toContainEqual(expect.objectContaining({ model: 'another-org-model' }));
    const hourly = (await report(adminKey, '&period=hour')).body.data as { turns: number }[];
    expect(hourly.reduce((sum, line) => sum + line.turns, 0)).toBe(3);

    // Once everything is flushed (this replica's turn, and the other's by an orphan pass), the
    // report is the same: no turn counted twice, none lost.
    await app.running.app.get(UsageFlusher).flush();
    await app.running.app.get(UsageRollups).flushOrphans(new Date(Date.now() + 60_000), 100);
    const [{ count }] = await app.dataSource.query<{ count: string }[]>(
      'SELECT count(*)::text AS count FROM usage_pending WHERE organization_id = $1',
      [org.id],
    );
    expect(count).toBe('0');
    expect((await report(adminKey)).body.total).toMatchObject(expected);
  });

  (process.env.DATABASE_URL ? it : it.skip)(
    'answers, with a just-finished turn, while usage_pending is locked against the flush (needs DATABASE_URL)',
    async () => {
      const org = await app.seedOrganization('report-locked');
      const adminKey = await app.createKey(org.id, ['admin']);
      // A stored turn: pending, and in this replica's next flush.
      const spent = await ask(org, 'one two three');
      locker = new pg.Client({ connectionString: app.database.url });
      await locker.connect();
      await locker.query('BEGIN');
      // Plain reads still run; the flush's DELETE would wait.
      await locker.query('LOCK TABLE usage_pending IN EXCLUSIVE MODE');
      try {
        expect((await report(adminKey)).body.total).toMatchObject({
          turns: 1,
          input_tokens: spent.input_tokens,
          output_tokens: spent.output_tokens,
        });
      } finally {
        await locker.query('COMMIT');
        await locker.end();
        locker = undefined;
      }
    },
  );
});
