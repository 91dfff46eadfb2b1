import { FakeUpstream } from './support/fake-upstream.js';
import { ANSWER } from './support/upstream-fault-scenarios.js';
import { call, type ApiReply } from './support/http.js';
import { postStream } from './support/sse.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

/**
 * Circuit breakers shared by two replicas through Redis (REDIS_URL; CI runs one): a primary that
 * keeps failing is cooled down for every replica, its cooldown shows in the admin API and
 * /metrics, and after it recovers one probe brings the traffic back. The cooldown is made short
 * by configuration; the wait is the cooldown, not 30 s.
 */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const COOLDOWN_MS = 3000;

describe('circuit breakers across two replicas', () => {
  let primary: FakeUpstream;
  let fallback: FakeUpstream;
  let first: TestApp;
  let second: TestApp;
  let org: SeededOrganization;
  let other: SeededOrganization;
  let user = 0;

  beforeAll(async () => {
    primary = await new FakeUpstream().start();
    fallback = await new FakeUpstream().start();
    fallback.setFallback({ text: ANSWER });
    const env = {
      REDIS_URL,
      // A prefix of this run's own: breakers of earlier runs or other files never interfere.
      REDIS_KEY_PREFIX: `breakers-e2e-${process.pid}-${Date.now()}`,
      UPSTREAM_MAX_RETRIES: '0',
      UPSTREAM_BREAKER_FAILURES: '2',
      UPSTREAM_BREAKER_COOLDOWN_MS: String(COOLDOWN_MS),
    };
    first = await startTestApp(env);
    second = await startTestApp(env, { reuse: first.database });
    const model = {
      provider: 'openai-compatible',
      baseUrl: primary.url,
      model: 'primary-model',
      fallbacks: [{ baseUrl: fallback.url, model: 'fallback-model' }],
    };
    org = await first.seedOrganization('breakers', model);
    other = await first.seedOrganization('breakers-other', model);
  });
  afterAll(async () => {
    await second?.stop();
    await first?.close();
    await primary?.stop();
    await fallback?.stop();
  });

  async function turn(app: TestApp, stream: boolean, tenant = org) {
    const userId = `user-${++user}`;
    const body = { model: tenant.assistantId, input: 'count to ten' };
    const headers = { 'x-user-id': userId };
    if (stream) {
      const reply = await postStream(app.baseUrl, tenant.keys.full_access, body, headers);
      const completed = reply.events.find((event) => event.json?.type === 'response.completed');
      expect(completed?.json.response.output_text).toBe(ANSWER);
    } else {
      const reply: ApiReply = await call(app.baseUrl, 'POST', '/v1/responses', {
        key: tenant.keys.full_access,
        body,
        headers,
      });
      expect(reply.status).toBe(200);
      expect(reply.body.output_text).toBe(ANSWER);
    }
    const rows = await first.dataSource.query(
      'SELECT status, upstream_attempts FROM responses WHERE organization_id = $1 AND user_id = $2',
      [tenant.id, userId],
    );
    expect(rows[0].status).toBe('completed');
    return (rows[0].upstream_attempts as { model: string; outcome: string }[]).map(
      (attempt) => `${attempt.model}:${attempt.outcome}`,
    );
  }

  const health = async (app: TestApp, tenant: SeededOrganization) => {
    const reply = await call(app.baseUrl, 'GET', `/admin/v1/organizations/${tenant.slug}/upstream-targets`, {
      headers: { authorization: `Bearer ${tenant.keys.admin}` },
    });
    expect(reply.status).toBe(200);
    return reply.body.data as { index: number; model: string; state: string; cooldownRemainingMs: number }[];
  };

  it('opens for both replicas, shows the cooldown, and lets traffic back after one probe', async () => {
    primary.setFallback({ status: 503 });
    // Two failed calls, one on each replica: the breaker they share opens.
    expect(await turn(first, false)).toEqual([
      'primary-model:upstream_unavailable',
      'fallback-model:completed',
    ]);
    expect(await turn(second, true)).toEqual([
      'primary-model:upstream_unavailable',
      'fallback-model:completed',
    ]);

    // Cooling down: neither replica sends the primary anything; the fallback answers at once.
    const sent = primary.requests.length;
    expect(await turn(first, true)).toEqual(['fallback-model:completed']);
    expect(await turn(second, false)).toEqual(['fallback-model:completed']);
    expect(primary.requests.length).toBe(sent);

    const targets = await health(second, org);
    expect(targets.map((target) => [target.index, target.model, target.state])).toEqual([
      [0, 'primary-model', 'open'],
      [1, 'fallback-model', 'closed'],
    ]);
    expect(targets[0].cooldownRemainingMs).toBeGreaterThan(0);
    expect(targets[0].cooldownRemainingMs).toBeLessThanOrEqual(COOLDOWN_MS);
    // Another organization on the same upstream has breakers of its own.
    expect((await health(first, other)).map((target) => target.state)).toEqual(['closed', 'closed']);

    const metrics = await call(first.baseUrl, 'GET', '/metrics');
    expect(metrics.body as string).toMatch(
      new RegExp(
        `switchboard_upstream_breaker_state\\{organization_id="${org.id}",target="primary-model@[^"]+"\\} 1`,
      ),
    );

    // The primary recovers; after the cooldown one call probes it and the traffic is back.
    primary.setFallback({ text: ANSWER });
    await new Promise((done) => setTimeout(done, COOLDOWN_MS + 100));
    expect((await health(first, org))[0].state).toBe('half_open');
    expect(await turn(second, true)).toEqual(['primary-model:completed']);
    expect(await turn(first, false)).toEqual(['primary-model:completed']);
    expect((await health(first, org)).map((target) => target.state)).toEqual(['closed', 'closed']);
  });

  it("holds an organization's fallbacks to its secret grants and reachable hosts, naming the field", async () => {
    const put = (model: unknown) =>
      call(first.baseUrl, 'PUT', `/admin/v1/organizations/${org.slug}/assistants/Fallbacks`, {
        headers: { authorization: `Bearer ${org.keys.admin}` },
        body: { instructions: 'x', model },
      });
    const base = { provider: 'openai-compatible', baseUrl: 'https://api.openai.com/v1', model: 'gpt' };
    const secret = await put({
      ...base,
      fallbacks: [{ baseUrl: 'https://api.openai.com/v1', model: 'b', apiKeyEnv: 'HOME' }],
    });
    expect(secret.status).toBe(403);
    expect(secret.body.error.message).toMatch(/^model\.fallbacks\[0\]\.apiKeyEnv: /);
    const host = await put({ ...base, fallbacks: [{ baseUrl: 'http://10.0.0.1/v1', model: 'b' }] });
    expect(host.status).toBe(400);
    expect(host.body.error.message).toMatch(/^model\.fallbacks\[0\]\.baseUrl: /);
  });

  it("shows a stored turn's attempts to its organization's admin only", async () => {
    primary.setFallback({ status: 429 });
    const reply = await call(first.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.full_access,
      body: { model: org.assistantId, input: 'count to ten' },
      headers: { 'x-user-id': `user-${++user}` },
    });
    primary.setFallback({ text: ANSWER });
    expect(reply.status).toBe(200);
    const read = (tenant: SeededOrganization) =>
      call(
        second.baseUrl,
        'GET',
        `/admin/v1/organizations/${tenant.slug}/responses/${reply.body.id}/upstream-attempts`,
        {
          headers: { authorization: `Bearer ${tenant.keys.admin}` },
        },
      );
    const own = await read(org);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ object: 'list', response_status: 'completed' });
    expect(own.body.data).toEqual([
      expect.objectContaining({
        model: 'primary-model',
        index: 0,
        outcome: 'upstream_rate_limited',
        httpStatus: 429,
      }),
      expect.objectContaining({ model: 'fallback-model', index: 1, outcome: 'completed', answered: true }),
    ]);
    const foreign = await read(other);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('response_not_found');
  });
});
