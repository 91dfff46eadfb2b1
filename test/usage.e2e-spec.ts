import { randomUUID } from 'node:crypto';
import { OrganizationsService } from '../src/organizations/organizations.service.js';
import { SpecialistsService } from '../src/specialists/specialists.service.js';
import { FakeUpstream } from './support/fake-upstream.js';
import { call } from './support/http.js';
import { postStream } from './support/sse.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';
import { startTestIdentityProvider, type TestIdentityProvider } from './support/test-identity-provider.js';
import { scrapeMetrics, usageTokenCounts } from './support/metrics.js';
import { USAGE_COUNT_NAMES } from '../src/usage/usage-line.js';

const ADMIN_GROUP = '/platform/admins';

const LOOKUP_TOOL = {
  type: 'function',
  name: 'lookup',
  description: 'Look something up',
  parameters: { type: 'object', properties: {} },
};
const HANDOVER = {
  toolCalls: [{ id: 'call_h', name: 'transfer_to_billing', arguments: '{"reason":"invoice"}' }],
};

/** `YYYY-MM-DD` of a UTC day `months` months from this one. */
/** The `day` of the month `months` away from the month of `from` (by default now), as YYYY-MM-DD. */
function dayOfMonth(months: number, day: number, from: Date = new Date()): string {
  return new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + months, day))
    .toISOString()
    .slice(0, 10);
}

describe('usage accounting, budgets and usage metrics', () => {
  let app: TestApp;
  let upstream: FakeUpstream;
  let org: SeededOrganization;
  let other: SeededOrganization;
  let secondKey: string;
  let adminKey: string;
  let model: string;
  let idp: TestIdentityProvider;

  const usage = (key: string, query = '') => call(app.baseUrl, 'GET', `/admin/v1/usage${query}`, { key });
  const asToken = (token: string, path: string) =>
    call(app.baseUrl, 'GET', path, { headers: { authorization: `Bearer ${token}` } });
  const respond = (key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    call(app.baseUrl, 'POST', '/v1/responses', { key, body, headers });

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    idp = await startTestIdentityProvider({ alice: [ADMIN_GROUP], bob: ['/usage-a/engineering'] });
    app = await startTestApp({
      UPSTREAM_MAX_RETRIES: '0',
      OIDC_ISSUER: idp.issuer,
      OIDC_CLIENT_ID: idp.audience,
      ADMIN_GROUP,
      ADMIN_AUDIENCE: 'switchboard-admin',
    });
    org = await app.seedOrganization('usage-a', {
      provider: 'openai-compatible',
      baseUrl: upstream.url,
      model: 'generic-model',
      functionCalling: true,
      prices: { currency: 'USD', inputPerMillion: 100, cachedInputPerMillion: 50, outputPerMillion: 400 },
    });
    other = await app.seedOrganization('usage-b');
    secondKey = await app.createKey(org.id, ['assistant']);
    adminKey = await app.createKey(org.id, ['admin']);
    model = `asst_${org.assistantId}`;
    await app.running.app.get(SpecialistsService).upsert(org.id, org.assistantId, {
      name: 'billing',
      role: 'Invoices',
      instructions: 'You are billing.',
      model: {
        provider: 'openai-compatible',
        baseUrl: upstream.url,
        model: 'billing-model',
        functionCalling: true,
        prices: { currency: 'EUR', inputPerMillion: 1000, outputPerMillion: 2000 },
      },
    });

    // A mixed run; every upstream call reports 11 prompt tokens and one completion token a word.
    const key1 = org.keys.assistant;
    upstream.script({ text: 'one two three', cachedTokens: 5, reasoningTokens: 2 });
    expect((await respond(key1, { model, input: 'json turn' }, { 'x-user-id': 'u1' })).status).toBe(200);

    upstream.script({ text: 'streamed reply here' });
    const streamed = await postStream(
      app.baseUrl,
      secondKey,
      { model, input: 'stream turn' },
      { 'x-user-id': 'u2' },
    );
    expect(streamed.events.at(-2)?.event).toBe('response.completed');

    upstream.script(HANDOVER, { text: 'Billing here.', cachedTokens: 3 });
    const handover = await postStream(
      app.baseUrl,
      key1,
      { model, input: 'my invoice' },
      { 'x-user-id': 'u1' },
    );
    expect(handover.events.at(-2)?.event).toBe('response.completed');

    upstream.script(
      { toolCalls: [{ id: 'call_c1', name: 'lookup', arguments: '{}' }] },
      { text: 'done now' },
    );
    const asked = await respond(key1, { model, input: 'client tool', tools: [LOOKUP_TOOL] });
    expect(asked.body.status).toBe('requires_action');
    const answered = await respond(key1, {
      model,
      previous_response_id: asked.body.id,
      input: [{ type: 'function_call_output', call_id: 'call_c1', output: '{}' }],
      tools: [LOOKUP_TOOL],
    });
    expect(answered.body.status).toBe('completed');

    // Fails after the generic call reported its usage: what was reported counts.
    upstream.script(HANDOVER, { status: 500 });
    expect((await respond(secondKey, { model, input: 'fails late' }, { 'x-user-id': 'u2' })).status).toBe(
      503,
    );
    // Fails before anything was reported: a turn with no tokens.
    upstream.script({ status: 500 });
    expect((await respond(key1, { model, input: 'fails early' })).status).toBe(503);
  });

  afterAll(async () => {
    await app?.close();
    await upstream?.stop();
    await idp?.close();
  });

  /**
   * When the setup's turns finished (usage is bucketed by a turn's completion, UTC): the periods
   * expected follow from it, not from the clock at assertion time, so a run across midnight or a
   * month's end expects what was stored.
   */
  async function turnsFinished(): Promise<Date> {
    const days = await app.dataSource.query<{ day: string; at: Date }[]>(
      `SELECT to_char(completed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, max(completed_at) AS at
         FROM responses WHERE organization_id = $1 AND completed_at IS NOT NULL GROUP BY 1`,
      [org.id],
    );
    expect(days).toHaveLength(1);
    return new Date(days[0].at);
  }

  it('sums equal the sums of the stored turns, with cached and reasoning tokens and cost per currency', async () => {
    const [stored] = await app.dataSource.query<{ turns: number; input: number; output: number }[]>(
      `SELECT count(*)::int AS turns, sum((usage->>'input_tokens')::int)::int AS input,
              sum((usage->>'output_tokens')::int)::int AS output
         FROM responses WHERE organization_id = $1`,
      [org.id],
    );
    expect(stored).toEqual({ turns: 7, input: 77, output: 12 });
    const reply = await usage(adminKey);
    expect(reply.status).toBe(200);
    expect(reply.body.object).toBe('list');
    expect(reply.body.data).toHaveLength(1);
    const [line] = reply.body.data;
    const finished = await turnsFinished();
    expect(line).toMatchObject({
      period: dayOfMonth(0, finished.getUTCDate(), finished),
      turns: 7,
      input_tokens: 77,
      cached_tokens: 8,
      output_tokens: 12,
      reasoning_tokens: 2,
      total_tokens: 89,
    });
    // USD: the generic model's six calls; EUR: the billing model's one answer (8 + 3 cached in, 2 out).
    expect(Object.keys(line.cost).sort()).toEqual(['EUR', 'USD']);
    expect(line.cost.USD).toBeCloseTo(
      (6 * 100 + 5 * 50 + 5 * 400 + 1100 + 1200 + 1100 + 1100 + 1900 + 1100) / 1e6,
      10,
    );
    expect(line.cost.EUR).toBeCloseTo((11 * 1000 + 2 * 2000) / 1e6, 10);
  });

  it('aggregates by each dimension', async () => {
    const by = async (dimension: string) => (await usage(adminKey, `?group_by=${dimension}`)).body.data;
    const pick = (lines: any[], name: string) =>
      lines.map((line) => [line[name], line.turns, line.input_tokens, line.output_tokens]);

    expect(pick(await by('organization'), 'organization_id')).toEqual([[org.id, 7, 77, 12]]);
    expect(pick(await by('assistant'), 'assistant_id')).toEqual([[model, 7, 77, 12]]);
    // The turn's active agent: both handover turns ended with billing.
    expect(pick(await by('specialist'), 'specialist')).toEqual([
      ['generic', 5, 44, 10],
      ['billing', 2, 33, 2],
    ]);
    const keys = await app.dataSource.query<{ id: string }[]>(
      'SELECT id FROM api_keys WHERE organization_id = $1',
      [org.id],
    );
    const byKey = pick(await by('key'), 'key_id');
    expect(byKey).toHaveLength(2);
    expect(byKey.map(([id]) => id).every((id) => keys.some((key) => key.id === id))).toBe(true);
    expect(byKey.map(([, turns, input]) => [turns, input]).sort()).toEqual([
      [2, 22],
      [5, 55],
    ]);
    const byUser = pick(await by('user'), 'user_id');
    expect(byUser).toEqual(
      expect.arrayContaining([
        ['u1', 2, 33, 7],
        ['u2', 2, 22, 3],
        [null, 3, 22, 2],
      ]),
    );
    expect(byUser).toHaveLength(3);
    const combined = await by('specialist,user');
    expect(combined).toContainEqual(
      expect.objectContaining({ specialist: 'billing', user_id: 'u1', turns: 1 }),
    );
    const narrowed = await usage(adminKey, `?user_id=u2&assistant_id=${model}`);
    expect(narrowed.body.data).toEqual([expect.objectContaining({ turns: 2, input_tokens: 22 })]);
  });

  it('aggregates by the model that answered, and in hourly buckets that add up to the day', async () => {
    const byModel = (await usage(adminKey, '?group_by=model')).body.data;
    // A turn counts once, under its first model call's model; the billing specialist's answer
    // counts its tokens under its own model. The turn that failed before any usage: model unknown.
    expect(
      byModel.map((line: any) => [line.model, line.turns, line.input_tokens, line.output_tokens, line.cost]),
    ).toEqual(
      expect.arrayContaining([
        ['generic-model', 6, 66, 10, { USD: expect.any(Number) }],
        ['billing-model', 0, 11, 2, { EUR: expect.any(Number) }],
        [null, 1, 0, 0, {}],
      ]),
    );
    expect(byModel).toHaveLength(3);
    const finished = await turnsFinished();
    const day = finished.toISOString().slice(0, 10);
    const hourly = (await usage(adminKey, `?period=hour&from=${day}&to=${day}`)).body.data;
    const [daily] = (await usage(adminKey, `?period=day&from=${day}&to=${day}`)).body.data;
    expect(hourly.length).toBeGreaterThan(0);
    for (const line of hourly) expect(line.period).toMatch(new RegExp(`^${day}T\\d{2}:00:00Z$`));
    for (const count of USAGE_COUNT_NAMES) {
      expect([count, hourly.reduce((sum: number, line: any) => sum + line[count], 0)]).toEqual([
        count,
        daily[count],
      ]);
    }
    expect(hourly).toContainEqual(
      expect.objectContaining({ period: `${finished.toISOString().slice(0, 13)}:00:00Z` }),
    );
  });

  it('aggregates by day and by month', async () => {
    const finished = await turnsFinished();
    const lastMonthDay = dayOfMonth(-1, 15, finished);
    // The report reads the hourly rollup (usage_hourly), which the turn store writes beside the daily one.
    await app.dataSource.query(
      `INSERT INTO usage_hourly (organization_id, hour, assistant_id, specialist, api_key_id, user_id, model, currency,
                                 turns, input_tokens, cached_tokens, output_tokens, reasoning_tokens, cost)
       VALUES ($1, $2, $3, '', $4, 'u1', '', '', 4, 100, 0, 50, 0, 0)`,
      [org.id, `${lastMonthDay}T10:00:00Z`, org.assistantId, randomUUID()],
    );
    const from = dayOfMonth(-1, 1, finished);
    const monthly = (await usage(adminKey, `?period=month&from=${from}`)).body.data;
    expect(monthly.map((line: any) => [line.period, line.turns, line.input_tokens])).toEqual([
      [lastMonthDay.slice(0, 7), 4, 100],
      [dayOfMonth(0, 1, finished).slice(0, 7), 7, 77],
    ]);
    const daily = (await usage(adminKey, `?period=day&from=${from}`)).body.data;
    expect(daily.map((line: any) => line.period)).toEqual([
      lastMonthDay,
      dayOfMonth(0, finished.getUTCDate(), finished),
    ]);
    // The default range is the current month: the turns' month, unless a month ended since.
    const month = () => new Date().toISOString().slice(0, 7);
    const monthBefore = month();
    const byDefault = (await usage(adminKey)).body.data;
    if (monthBefore === month()) {
      expect(byDefault).toHaveLength(monthBefore === dayOfMonth(0, 1, finished).slice(0, 7) ? 1 : 0);
    }
    expect((await usage(adminKey, `?from=${lastMonthDay}&to=${lastMonthDay}`)).body.data).toEqual([
      expect.objectContaining({ period: lastMonthDay, turns: 4 }),
    ]);
  });

  it('refuses bad queries by name', async () => {
    for (const [query, words] of [
      ['?period=week', 'period'],
      ['?group_by=plan', 'group_by'],
      ['?period=hour&from=2026-01-01&to=2026-02-01', '31 days apart for period=hour'],
      ['?group_by=user,user', 'twice'],
      ['?from=2026-13-01', 'from'],
      ['?from=2026-02-01&to=2026-01-01', 'after'],
      ['?from=2020-01-01&to=2026-01-01', '366'],
    ]) {
      const reply = await usage(adminKey, query);
      expect(reply.status).toBe(400);
      expect(reply.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request' });
      expect(reply.body.error.message).toContain(words);
    }
  });

  it('shows an admin key only its own organization, a platform administrator every one', async () => {
    const otherAdmin = await app.createKey(other.id, ['admin']);
    expect((await usage(otherAdmin, `?group_by=organization&assistant_id=${model}`)).body).toEqual({
      object: 'list',
      data: [],
      total: {
        turns: 0,
        input_tokens: 0,
        cached_tokens: 0,
        output_tokens: 0,
        reasoning_tokens: 0,
        total_tokens: 0,
        cost: {},
      },
    });
    const foreign = await call(app.baseUrl, 'GET', '/admin/v1/organizations/usage-a/usage', {
      key: otherAdmin,
    });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('not_found');
    const own = await call(app.baseUrl, 'GET', '/admin/v1/organizations/usage-a/usage', { key: adminKey });
    expect(own.body.data).toEqual([expect.objectContaining({ turns: 7, input_tokens: 77 })]);
    for (const key of [org.keys.full_access, org.keys.assistant, org.keys.user]) {
      const refused = await usage(key);
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('insufficient_scope');
    }
    expect((await call(app.baseUrl, 'GET', '/admin/v1/usage')).status).toBe(401);

    const platform = await idp.mint({ sub: 'alice', groups: [ADMIN_GROUP], aud: 'switchboard-admin' });
    const all = await asToken(platform, '/admin/v1/usage?group_by=organization');
    expect(all.status).toBe(200);
    expect(all.body.data).toContainEqual(expect.objectContaining({ organization_id: org.id, turns: 7 }));
    const one = await asToken(platform, `/admin/v1/organizations/${org.id}/usage`);
    expect(one.body.data).toEqual([expect.objectContaining({ turns: 7, input_tokens: 77 })]);
    const outsider = await idp.mint({
      sub: 'bob',
      groups: ['/usage-a/engineering'],
      aud: 'switchboard-admin',
    });
    expect((await asToken(outsider, '/admin/v1/usage')).status).toBe(403);
  });

  it('counts tokens by organization, assistant and type on /metrics', async () => {
    const text = await scrapeMetrics(app.baseUrl);
    const counted = (type: string) =>
      usageTokenCounts(text, { organization: org.id, assistant: org.assistantId, type });
    expect(counted('input')).toEqual([77]);
    expect(counted('cached')).toEqual([8]);
    expect(counted('output')).toEqual([12]);
    expect(counted('reasoning')).toEqual([2]);
  });

  it('refuses turns with 429 token_budget_exceeded once the month is spent, and counts only this month', async () => {
    const budgeted = await app.seedOrganization('usage-budget');
    const budgetModel = `asst_${budgeted.assistantId}`;
    await app.running.app.get(OrganizationsService).setMonthlyTokenBudget(budgeted.id, 5);
    // Last month's spend is far over the budget: it reset at the month boundary.
    await app.dataSource.query(
      `INSERT INTO usage_daily (organization_id, day, assistant_id, specialist, api_key_id, user_id, currency,
                                turns, input_tokens, output_tokens)
       VALUES ($1, $2, $3, '', $4, '', '', 100, 100000, 100000)`,
      [budgeted.id, dayOfMonth(-1, 28), budgeted.assistantId, randomUUID()],
    );
    const first = await respond(budgeted.keys.assistant, {
      model: budgetModel,
      input: 'hello there my friend',
    });
    expect(first.status).toBe(200);
    expect(first.body.usage.input_tokens + first.body.usage.output_tokens).toBeGreaterThanOrEqual(5);

    const before = Date.now();
    const refused = await respond(budgeted.keys.assistant, { model: budgetModel, input: 'again' });
    const after = Date.now();
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ type: 'rate_limit_error', code: 'token_budget_exceeded' });
    expect(refused.body.error.message).toContain('budget of 5 tokens');
    const nextMonth = Date.parse(`${dayOfMonth(1, 1)}T00:00:00Z`);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(Math.ceil((nextMonth - after) / 1000));
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil((nextMonth - before) / 1000));
    // A stream is refused before it starts, as a plain HTTP error.
    const stream = await postStream(app.baseUrl, budgeted.keys.assistant, { model: budgetModel, input: 'x' });
    expect(stream.status).toBe(429);
    // Nothing was stored for the refused turns; other organizations are not affected.
    const [{ count }] = await app.dataSource.query<{ count: number }[]>(
      'SELECT count(*)::int AS count FROM responses WHERE organization_id = $1',
      [budgeted.id],
    );
    expect(count).toBe(1);
    upstream.script({ text: 'still fine' });
    expect((await respond(org.keys.assistant, { model, input: 'fine' })).status).toBe(200);
  });
});
