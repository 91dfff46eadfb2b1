import { OrganizationsService } from '../src/organizations/organizations.service.js';
import { call, untilFinished } from './support/http.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';
import { scrapeMetrics, usageTokenCounts } from './support/metrics.js';

/**
 * Background turns count against the monthly token budget as soon as they are stored, as
 * foreground turns do: the budget's cached spend is read once per RATE_LIMIT_CACHE_SECONDS, so a
 * turn that did not report its tokens to it would let an organization overspend until the next read.
 */
describe('monthly token budget with background turns', () => {
  let app: TestApp;
  let org: SeededOrganization;
  let model: string;

  const respond = (body: Record<string, unknown>) =>
    call(app.baseUrl, 'POST', '/v1/responses', { key: org.keys.full_access, body });

  const finished = (id: string) => untilFinished(app.baseUrl, org.keys.full_access, id);

  beforeAll(async () => {
    // A long cache: only what this replica's turns report moves the budget between reads.
    app = await startTestApp({ RATE_LIMIT_CACHE_SECONDS: '300', BACKGROUND_EVENT_FLUSH_MS: '20' });
    org = await app.seedOrganization('budget-background');
    model = `asst_${org.assistantId}`;
    await app.running.app.get(OrganizationsService).setMonthlyTokenBudget(org.id, 5);
  });

  afterAll(async () => {
    await app?.close();
  });

  it('refuses the next turn with 429 once a background turn spent the budget', async () => {
    const created = await respond({ model, input: 'hello there my friend', background: true });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ status: 'queued', background: true });
    const done = await finished(created.body.id);
    expect(done.status).toBe('completed');
    expect(done.usage.input_tokens + done.usage.output_tokens).toBeGreaterThanOrEqual(5);

    const refused = await respond({ model, input: 'again', background: true });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ type: 'rate_limit_error', code: 'token_budget_exceeded' });
    const foreground = await respond({ model, input: 'and again' });
    expect(foreground.status).toBe(429);

    // The background turn's tokens are on /metrics too, as a foreground turn's are.
    const metrics = await scrapeMetrics(app.baseUrl);
    const counted = usageTokenCounts(metrics, { organization: org.id, type: 'input' });
    expect(counted).toEqual([done.usage.input_tokens]);

    // Only the one turn was stored.
    const [{ count }] = await app.dataSource.query<{ count: number }[]>(
      'SELECT count(*)::int AS count FROM responses WHERE organization_id = $1',
      [org.id],
    );
    expect(count).toBe(1);
  });
});
