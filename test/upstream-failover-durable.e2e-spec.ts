import { setTimeout as sleep } from 'node:timers/promises';
import {
  buildService,
  startService,
  type ServiceBuild,
  type ServiceProcess,
} from './support/built-service.js';
import { FakeUpstream, type UpstreamScript } from './support/fake-upstream.js';
import { ANSWER } from './support/upstream-fault-scenarios.js';
import { call } from './support/http.js';
import { parseSse } from './support/sse.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

/**
 * Fallback targets on durable turns (issue 26, docs/resilience.md and docs/api.md): a background
 * turn fails over like a foreground one, and a replica killed with SIGKILL while a model call is
 * between targets leaves the turn `failed` (`response_interrupted`) within the lease bound — never
 * re-run, never stuck `in_progress`. The survivor runs in this process; the victim is the built
 * service in a child process, both on one PostgreSQL database.
 */

const LEASE_SECONDS = 2;
const SWEEP_MS = 200;
const DURABLE_ENV = {
  TURN_LEASE_SECONDS: String(LEASE_SECONDS),
  TURN_LEASE_RENEW_MS: '100',
  TURN_SWEEP_MS: String(SWEEP_MS),
  BACKGROUND_EVENT_FLUSH_MS: '20',
  RESUME_POLL_MS: '20',
};
const UPSTREAM_ENV = {
  PRIMARY_KEY: 'sk-primary',
  FALLBACK_KEY: 'sk-fallback',
  UPSTREAM_MAX_RETRIES: '2',
  UPSTREAM_HEADERS_TIMEOUT_MS: '1500',
  // Far beyond the test: a stalled target is still stalled when its replica is killed.
  UPSTREAM_FIRST_TOKEN_TIMEOUT_MS: '60000',
  UPSTREAM_STALL_TIMEOUT_MS: '60000',
  // Every call fails the primary on purpose: breakers are tested in upstream-breakers.e2e-spec.ts.
  UPSTREAM_BREAKER_FAILURES: '0',
};
/** The documented bound (docs/api.md): lease + sweep interval; the slack covers a busy CI machine. */
const BOUND_MS = LEASE_SECONDS * 1000 + SWEEP_MS;
const SLACK_MS = 5000;

// A killed process that owns an embedded database takes the database with it, so this file runs
// only with DATABASE_URL (CI runs it on PostgreSQL), as durable-turns-kill.e2e-spec.ts does.
const onServer = process.env.DATABASE_URL ? describe : describe.skip;

onServer('fallback targets on background turns, and a replica killed mid-fallback (PostgreSQL)', () => {
  let primary: FakeUpstream;
  let fallback: FakeUpstream;
  let survivor: TestApp;
  let build: ServiceBuild;
  let victim: ServiceProcess | undefined;
  let org: SeededOrganization;
  let user = 0;

  beforeAll(async () => {
    primary = await new FakeUpstream().start();
    fallback = await new FakeUpstream().start();
    fallback.setFallback({ text: ANSWER });
    survivor = await startTestApp({ ...DURABLE_ENV, ...UPSTREAM_ENV });
    build = await buildService();
    org = await survivor.seedOrganization('durable-failover', {
      provider: 'openai-compatible',
      baseUrl: primary.url,
      model: 'primary-model',
      apiKeyEnv: 'PRIMARY_KEY',
      fallbacks: [{ baseUrl: fallback.url, model: 'small-model', apiKeyEnv: 'FALLBACK_KEY' }],
    });
  }, 240_000);

  beforeEach(() => {
    primary.clearScripts().setFallback({ text: ANSWER });
    fallback.clearScripts().setFallback({ text: ANSWER });
  });
  afterEach(() => {
    if (victim && victim.child.exitCode === null) victim.child.kill('SIGKILL');
  });
  afterAll(async () => {
    await survivor?.close();
    await primary?.stop();
    await fallback?.stop();
  });

  async function storedRow(id: string) {
    const rows = await survivor.dataSource.query(
      'SELECT status, error, output_text, upstream_attempts FROM responses WHERE organization_id = $1 AND id = $2',
      [org.id, id.slice('resp_'.length)],
    );
    expect(rows).toHaveLength(1);
    return rows[0];
  }

  /** Polls the survivor until the response leaves queued/in_progress, failing after `withinMs`. */
  async function settled(id: string, since: number, withinMs: number, userId: string): Promise<any> {
    while (Date.now() - since < withinMs) {
      const reply = await call(survivor.baseUrl, 'GET', `/v1/responses/${id}`, {
        key: org.keys.full_access,
        headers: { 'x-user-id': userId },
      });
      expect(reply.status).toBe(200);
      if (reply.body.status !== 'in_progress' && reply.body.status !== 'queued') return reply.body;
      await sleep(50);
    }
    throw new Error(`${id} was still running ${withinMs} ms later`);
  }

  async function startBackground(baseUrl: string, userId: string): Promise<string> {
    const reply = await call(baseUrl, 'POST', '/v1/responses', {
      key: org.keys.full_access,
      headers: { 'x-user-id': userId },
      body: { model: org.assistantId, input: 'count to ten', background: true },
    });
    expect(reply.status).toBe(200);
    expect(['queued', 'in_progress']).toContain(reply.body.status);
    return reply.body.id as string;
  }

  async function until(condition: () => boolean, what: string): Promise<void> {
    for (const started = Date.now(); !condition(); await sleep(10)) {
      if (Date.now() - started > 20_000) throw new Error(`never: ${what}`);
    }
  }

  it('a background turn whose primary answers 503 persistently completes from the fallback', async () => {
    const userId = `user-${++user}`;
    primary.setFallback({ status: 503 });
    const sent = { primary: primary.requests.length, fallback: fallback.requests.length };
    const id = await startBackground(survivor.baseUrl, userId);

    const final = await settled(id, Date.now(), 30_000, userId);
    expect(final).toMatchObject({ id, status: 'completed', output_text: ANSWER, error: null });
    expect(final.usage.output_tokens).toBeGreaterThan(0);
    // The primary failed over at once (no retries on it), the fallback answered with its own key.
    expect(primary.requests.length - sent.primary).toBe(1);
    expect(fallback.requests.length - sent.fallback).toBe(1);
    expect(fallback.last.body.model).toBe('small-model');
    expect(fallback.last.headers.authorization).toBe('Bearer sk-fallback');

    const row = await storedRow(id);
    expect(row.status).toBe('completed');
    expect(row.upstream_attempts).toEqual([
      expect.objectContaining({
        model: 'primary-model',
        index: 0,
        outcome: 'upstream_unavailable',
        httpStatus: 503,
      }),
      expect.objectContaining({ model: 'small-model', outcome: 'completed', answered: true }),
    ]);
    expect(row.upstream_attempts[0].answered).toBeUndefined();
    const admin = await call(
      survivor.baseUrl,
      'GET',
      `/admin/v1/organizations/${org.id}/responses/${id}/upstream-attempts`,
      { key: org.keys.admin },
    );
    expect(admin.status).toBe(200);
    expect(JSON.stringify(admin.body)).toContain('small-model');

    // The stored event stream is the one of a plain completed turn: no error, the whole answer.
    const replay = await fetch(`${survivor.baseUrl}/v1/responses/${id}?stream=true`, {
      headers: { 'x-api-key': org.keys.full_access, 'x-user-id': userId },
    });
    const { events: blocks } = parseSse(await replay.text());
    expect(blocks[blocks.length - 1].data).toBe('[DONE]');
    const events = blocks.slice(0, -1).map((event) => event.json);
    const types = events.map((event) => event.type);
    expect(types).not.toContain('response.error');
    expect(types[types.length - 1]).toBe('response.completed');
    expect(
      events
        .filter((event) => event.type === 'response.output_text.delta')
        .map((event) => event.delta)
        .join(''),
    ).toBe(ANSWER);
  });

  const KILLS: {
    name: string;
    primary: UpstreamScript;
    fallback: UpstreamScript;
    stalled: () => FakeUpstream;
  }[] = [
    {
      name: 'while the primary stalls before its first token',
      primary: { text: ANSWER, firstTokenDelayMs: 20_000 },
      fallback: { text: ANSWER },
      stalled: () => primary,
    },
    {
      name: 'while the fallback, after a primary 503, stalls before its first token',
      primary: { status: 503 },
      fallback: { text: ANSWER, firstTokenDelayMs: 20_000 },
      stalled: () => fallback,
    },
  ];

  for (const scenario of KILLS) {
    it(`a replica killed ${scenario.name}: the turn is failed within the lease bound, not re-run`, async () => {
      victim = await startService(build, { ...survivor.database.env, ...DURABLE_ENV, ...UPSTREAM_ENV });
      const userId = `user-${++user}`;
      primary.setFallback(scenario.primary);
      fallback.setFallback(scenario.fallback);
      const stalled = scenario.stalled();
      const before = { stalled: stalled.requests.length, aborted: stalled.aborted };
      const id = await startBackground(victim.baseUrl, userId);
      await until(() => stalled.requests.length > before.stalled, 'the stalled target got its request');
      const sent = { primary: primary.requests.length, fallback: fallback.requests.length };
      expect((await storedRow(id)).status).toBe('in_progress');

      victim.child.kill('SIGKILL');
      await victim.exit;
      const killedAt = Date.now();
      // The kill closes the stalled model call (the upstream sees its client go).
      await until(() => stalled.aborted > before.aborted, 'the stalled call was closed');

      const final = await settled(id, killedAt, BOUND_MS + SLACK_MS, userId);
      expect(final).toMatchObject({ id, status: 'failed', error: { code: 'response_interrupted' } });
      // A lost turn is failed, not re-run (docs/architecture.md): no target was called again.
      await sleep(SWEEP_MS * 2);
      expect(primary.requests.length).toBe(sent.primary);
      expect(fallback.requests.length).toBe(sent.fallback);
      const row = await storedRow(id);
      expect(row).toMatchObject({
        status: 'failed',
        error: expect.objectContaining({ code: 'response_interrupted' }),
      });

      // A stream resumed on the survivor ends with the same error, with no answer text.
      const replay = await fetch(`${survivor.baseUrl}/v1/responses/${id}?stream=true`, {
        headers: { 'x-api-key': org.keys.full_access, 'x-user-id': userId },
      });
      const events = parseSse(await replay.text()).events.map((event) => event.json);
      expect(events[events.length - 1]).toMatchObject({
        type: 'response.error',
        error: expect.objectContaining({ code: 'response_interrupted' }),
      });
      expect(events.map((event) => event.type)).not.toContain('response.output_text.delta');
    });
  }
});
