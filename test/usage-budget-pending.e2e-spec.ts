import pg from 'pg';
import { OrganizationsService } from '../src/organizations/organizations.service.js';
import { UsageFlusher } from '../src/usage/usage-flusher.service.js';
import { call, type ApiReply as Reply } from './support/http.js';
import { insertPendingTurn } from './support/pending-usage.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

/**
 * The monthly budget's read counts the month's rolled-up usage and the turns still pending
 * (usage_pending), whichever replica stored them, in one statement, and waits for no flush
 * (docs/usage.md, "Monthly token budgets"). Every check reads (RATE_LIMIT_CACHE_SECONDS=0), and
 * the timer flush does not run within a test (USAGE_FLUSH_MS: a minute).
 */
describe('the monthly budget counts pending usage without waiting for a flush', () => {
  let app: TestApp;
  /** A client holding a lock on usage_pending, ended before the app is closed. */
  let locker: pg.Client | undefined;

  beforeAll(async () => {
    app = await startTestApp({ RATE_LIMIT_CACHE_SECONDS: '0', USAGE_FLUSH_MS: '60000' });
  });

  afterAll(async () => {
    await locker?.end();
    await app?.close();
  });

  const ask = (org: SeededOrganization, input: string, more: Record<string, unknown> = {}) =>
    call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.full_access,
      body: { model: `asst_${org.assistantId}`, input, ...more },
    });
  const tokens = (reply: Reply) => {
    expect(reply.status).toBe(200);
    return (reply.body.usage.input_tokens as number) + (reply.body.usage.output_tokens as number);
  };
  const budget = (org: SeededOrganization, tokens: number) =>
    app.running.app.get(OrganizationsService).setMonthlyTokenBudget(org.id, tokens);
  const expectRefused = (reply: Reply) => {
    expect(reply.status).toBe(429);
    expect(reply.body.error).toMatchObject({ type: 'rate_limit_error', code: 'token_budget_exceeded' });
  };

  /** A turn another replica stored and has not flushed yet: `input` and `output` tokens at `at`. */
  const otherReplicasTurn = (org: SeededOrganization, at: Date, inputTokens: number, outputTokens: number) =>
    insertPendingTurn(app.dataSource, {
      organizationId: org.id,
      assistantId: org.assistantId,
      at,
      inputTokens,
      outputTokens,
    });

  it("counts the month's rolled-up and pending turns, this replica's and another's, each once", async () => {
    const org = await app.seedOrganization('budget-pending');
    const rolledUp = tokens(await ask(org, 'one two three'));
    await app.running.app.get(UsageFlusher).flush();
    const pending = tokens(await ask(org, 'four five'));
    await otherReplicasTurn(org, new Date(), 4, 3);
    // Last month's pending turn does not count.
    const now = new Date();
    await otherReplicasTurn(
      org,
      new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) - 1000),
      500,
      500,
    );
    const spent = rolledUp + pending + 7;

    await budget(org, spent + 1);
    const last = tokens(await ask(org, 'six'));
    await budget(org, spent + last);
    expectRefused(await ask(org, 'seven'));
  });

  (process.env.DATABASE_URL ? it : it.skip)(
    'starts and refuses turns while usage_pending is locked against the flush (needs DATABASE_URL)',
    async () => {
      const org = await app.seedOrganization('budget-locked');
      // A stored turn: pending, and in this replica's next flush.
      const spent = tokens(await ask(org, 'one two three'));
      await budget(org, spent + 1);
      locker = new pg.Client({ connectionString: app.database.url });
      await locker.connect();
      await locker.query('BEGIN');
      // Plain reads still run; the flush's DELETE (and a stored turn's INSERT) would wait.
      await locker.query('LOCK TABLE usage_pending IN EXCLUSIVE MODE');
      try {
        // `store: false`: the turn itself writes nothing, so only its budget check could wait.
        const unstored = await ask(org, 'four', { store: false });
        expect(unstored.status).toBe(200);
        expect(unstored.body.status).toBe('completed');
        await budget(org, spent);
        expectRefused(await ask(org, 'five', { store: false }));
      } finally {
        await locker.query('COMMIT');
        await locker.end();
        locker = undefined;
      }
    },
  );
});
