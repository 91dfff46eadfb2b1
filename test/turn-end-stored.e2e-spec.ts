import { setTimeout as sleep } from 'node:timers/promises';
import { TurnLeases } from '../src/responses/durable/turn-leases.service.js';
import { FakeUpstream } from './support/fake-upstream.js';
import { call } from './support/http.js';
import { openStreamAtFirstDelta, parseSse, type SseEvent } from './support/sse.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

/**
 * A client is told how its turn ended as the store holds it (docs/architecture.md, "Durable
 * turns"): a turn whose row was ended elsewhere while its upstream stalled (swept as if its
 * replica were lost) never announces `response.completed` when the upstream resumes, and a JSON
 * turn whose final write stored nothing is not answered 200.
 */
describe('the end a client is told is the stored one', () => {
  let app: TestApp;
  let upstream: FakeUpstream;
  let org: SeededOrganization;

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    // No lease renewal and no sweep of its own within the test: the test sweeps when it chooses,
    // and the replica learns of it only from its final write.
    app = await startTestApp({
      UPSTREAM_TEST_KEY: 'sk-test',
      UPSTREAM_STALL_TIMEOUT_MS: '60000',
      TURN_LEASE_SECONDS: '600',
      TURN_LEASE_RENEW_MS: '300000',
      TURN_SWEEP_MS: '600000',
    });
    org = await app.seedOrganization('turn-end-stored', {
      provider: 'openai-compatible',
      baseUrl: upstream.url,
      model: 'held-model',
      apiKeyEnv: 'UPSTREAM_TEST_KEY',
    });
  });

  afterAll(async () => {
    await app?.close();
    await upstream?.stop();
  });

  /**
   * The upstream streams its text, then stalls, its stream open, until `release` is called; then
   * it finishes, or (`failing`) ends without a finish reason, which fails the turn.
   */
  function holdUpstream(failing = false): () => void {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    upstream.script(
      failing
        ? { text: 'one two three', omitFinish: true, endAfter: held }
        : { text: 'one two three', resumeAfter: held },
    );
    return release;
  }

  /**
   * A stream whose turn is swept while its upstream stalls (as if this replica had stalled past
   * its lease); `then` lets the turn go on. Its events and the response GET shows afterwards.
   */
  async function sweptStream(then: () => Promise<void>): Promise<{ events: SseEvent[]; stored: any }> {
    const stream = await openStreamAtFirstDelta(app.baseUrl, org.keys.full_access, `asst_${org.assistantId}`);
    const id = /"id":"(resp_[^"]+)"/.exec(stream.raw())![1];
    await app.dataSource.query(
      `UPDATE responses SET lease_expires_at = now() - interval '1 second' WHERE id = $1`,
      [id.slice('resp_'.length)],
    );
    await app.running.app.get(TurnLeases).sweep();
    const swept = await call(app.baseUrl, 'GET', `/v1/responses/${id}`, { key: org.keys.full_access });
    expect(swept.body).toMatchObject({ status: 'failed', error: { code: 'response_interrupted' } });
    await then();
    const { events } = parseSse(await stream.rest());
    const polled = await call(app.baseUrl, 'GET', `/v1/responses/${id}`, { key: org.keys.full_access });
    return { events, stored: polled.body };
  }

  /** The stream ends with the stored failure: `response.failed` as GET shows it, then its error. */
  function expectStoredFailure(events: SseEvent[], stored: any): void {
    const types = events.map((event) => event.json?.type ?? event.data);
    expect(types).not.toContain('response.completed');
    expect(types).not.toContain('[DONE]');
    expect(types.slice(-2)).toEqual(['response.failed', 'response.error']);
    const [failed, error] = events.slice(-2).map((event) => event.json);
    expect(stored).toMatchObject({ status: 'failed', error: { code: 'response_interrupted' } });
    expect(failed.response).toEqual(stored);
    expect(error.error).toEqual(stored.error);
  }

  it('ends a stream swept during an upstream stall with the stored failure, not response.completed', async () => {
    const release = holdUpstream();
    // The upstream resumes and finishes: the turn's final write finds the row failed.
    const { events, stored } = await sweptStream(() => Promise.resolve(release()));
    expectStoredFailure(events, stored);
  });

  it('ends a swept stream whose upstream then fails with the stored failure, not its own', async () => {
    // After its stall the upstream ends without a finish reason: the turn fails on this replica.
    const release = holdUpstream(true);
    const { events, stored } = await sweptStream(() => Promise.resolve(release()));
    expectStoredFailure(events, stored);
  });

  it('ends a swept stream its replica stops at the next lease renewal with the stored failure', async () => {
    const release = holdUpstream();
    try {
      const { events, stored } = await sweptStream(() => app.running.app.get(TurnLeases).renew());
      expectStoredFailure(events, stored);
    } finally {
      release();
    }
  });

  it('answers a JSON turn whose final write stored nothing with an error, as GET finds nothing', async () => {
    const other = await app.seedOrganization('turn-end-stored-other');
    const made = await call(app.baseUrl, 'POST', '/v1/conversations', {
      key: org.keys.full_access,
      body: {},
    });
    expect(made.status).toBe(200);
    const conversation = made.body.id as string;
    const release = holdUpstream();
    const before = upstream.requests.length;
    const reply = call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.full_access,
      body: { model: `asst_${org.assistantId}`, input: 'keep me', conversation },
    });
    for (let attempt = 0; upstream.requests.length === before; attempt++) {
      if (attempt > 500) throw new Error('timed out waiting for the model call');
      await sleep(20);
    }
    // The conversation is no longer this organization's when the turn ends: its write stores nothing.
    await app.dataSource.query(`UPDATE conversations SET organization_id = $1 WHERE id = $2`, [
      other.id,
      conversation.slice('conv_'.length),
    ]);
    release();
    const answered = await reply;
    // What GET answers for the id: no row holds it (not "send the request again": the turn ran).
    expect(answered.status).toBe(404);
    expect(answered.body.error).toMatchObject({ type: 'not_found_error', code: 'response_not_found' });
    // Nothing of the turn is stored, so no id was handed out for GET to miss.
    const stored: unknown[] = await app.dataSource.query(
      `SELECT id FROM responses WHERE conversation_id = $1`,
      [conversation.slice('conv_'.length)],
    );
    expect(stored).toEqual([]);
  });
});
