import { FakeUpstream, type UpstreamScript } from './support/fake-upstream.js';
import { ANSWER, SCENARIOS, type Scenario } from './support/upstream-fault-scenarios.js';
import { call, type ApiReply } from './support/http.js';
import { postStream, type StreamReply } from './support/sse.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';
import { UsageFlusher } from '../src/usage/usage-flusher.service.js';

/**
 * The Failover Bench fault scenarios on the one upstream an assistant has today, each through
 * `POST /v1/responses` streamed and JSON: what the client sees, how many attempts reached the
 * upstream, and the status the turn is stored with (docs/resilience.md). The deadlines are made
 * small by configuration; no assertion bounds how long anything took (one checks that a retry
 * waited at least what the upstream asked for). The scenarios: test/support/upstream-fault-scenarios.ts.
 */

describe('upstream faults, streamed and JSON, on the single upstream', () => {
  let upstream: FakeUpstream;
  let app: TestApp;
  let org: SeededOrganization;
  let user = 0;

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    upstream.setFallback({ text: ANSWER });
    app = await startTestApp({
      FAKE_UPSTREAM_KEY: 'sk-test',
      UPSTREAM_MAX_RETRIES: '2',
      UPSTREAM_RETRY_BUDGET_MS: '8000',
      UPSTREAM_HEADERS_TIMEOUT_MS: '1500',
      UPSTREAM_FIRST_TOKEN_TIMEOUT_MS: '2000',
      UPSTREAM_STALL_TIMEOUT_MS: '1000',
    });
    org = await app.seedOrganization('upstream-faults', {
      provider: 'openai-compatible',
      baseUrl: upstream.url,
      model: 'fake-model',
      apiKeyEnv: 'FAKE_UPSTREAM_KEY',
    });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.stop();
  });

  /** The one turn stored for this end user. */
  async function storedTurn(userId: string): Promise<{ status: string; error: any; output_text: string }> {
    const rows = await app.dataSource.query(
      'SELECT status, error, output_text FROM responses WHERE organization_id = $1 AND user_id = $2',
      [org.id, userId],
    );
    expect(rows).toHaveLength(1);
    return rows[0];
  }

  /** Waits (bounded) until the upstream has seen `count` requests cancelled in all. */
  async function cancelledUpstream(count: number): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (upstream.aborted < count && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 20));
    }
    expect(upstream.aborted).toBeGreaterThanOrEqual(count);
  }

  async function run(
    scenario: Scenario,
    stream: boolean,
  ): Promise<{ reply: ApiReply | StreamReply; userId: string; sent: number }> {
    const userId = `user-${++user}`;
    const sent = upstream.requests.length;
    upstream.script(...scenario.scripts);
    const body = { model: org.assistantId, input: 'count to ten' };
    const headers = { 'x-user-id': userId };
    const reply = stream
      ? await postStream(app.baseUrl, org.keys.full_access, body, headers)
      : await call(app.baseUrl, 'POST', '/v1/responses', { key: org.keys.full_access, body, headers });
    return { reply, userId, sent };
  }

  for (const scenario of SCENARIOS) {
    it(`JSON: ${scenario.name}`, async () => {
      const aborted = upstream.aborted;
      const { reply, userId, sent } = await run(scenario, false);
      const json = reply as ApiReply;
      expect(upstream.requests.length - sent).toBe(scenario.attempts);
      const stored = await storedTurn(userId);
      if (scenario.outcome.completed) {
        expect(json.status).toBe(200);
        expect(json.body.status).toBe('completed');
        expect(json.body.output_text).toBe(ANSWER);
        expect(json.body.usage.output_tokens).toBeGreaterThan(0);
        expect(stored.status).toBe('completed');
        expect(stored.output_text).toBe(ANSWER);
      } else {
        const outcome = scenario.outcome;
        expect(json.status).toBe(outcome.status);
        expect(json.body).toEqual({
          error: {
            type: expect.any(String),
            code: outcome.code,
            message: expect.stringMatching(outcome.message),
          },
        });
        expect(json.body.error.message).not.toContain('sk-proj-abcdef');
        expect(json.headers.get('retry-after') ?? undefined).toBe(
          outcome.retryAfter ?? (outcome.status === 503 ? '1' : undefined),
        );
        expect(stored.status).toBe('failed');
        expect(stored.error.code).toBe(outcome.code);
      }
      if (scenario.cancelled) await cancelledUpstream(aborted + 1);
    });

    it(`streamed: ${scenario.name}`, async () => {
      const aborted = upstream.aborted;
      const { reply, userId, sent } = await run(scenario, true);
      const stream = reply as StreamReply;
      expect(stream.status).toBe(200);
      expect(upstream.requests.length - sent).toBe(scenario.attempts);
      const types = stream.events.map((event) => event.json?.type ?? event.data);
      expect(types[0]).toBe('response.created');
      const deltas = stream.events
        .filter((event) => event.json?.type === 'response.output_text.delta')
        .map((event) => event.json.delta as string)
        .join('');
      const stored = await storedTurn(userId);
      if (scenario.outcome.completed) {
        const completed = stream.events.find((event) => event.json?.type === 'response.completed');
        expect(completed?.json.response.status).toBe('completed');
        expect(completed?.json.response.usage.output_tokens).toBeGreaterThan(0);
        expect(deltas).toBe(ANSWER);
        expect(types).not.toContain('response.error');
        expect(stored.status).toBe('completed');
        expect(stored.output_text).toBe(ANSWER);
      } else {
        const outcome = scenario.outcome;
        expect(types).not.toContain('response.completed');
        const last = stream.events[stream.events.length - 1].json;
        expect(last.type).toBe('response.error');
        expect(last.error).toEqual({
          type: expect.any(String),
          code: outcome.code,
          message: expect.stringMatching(outcome.message),
        });
        // Output relayed before the failure stays relayed (and stored), never reported complete.
        if (outcome.afterOutput) expect(deltas.length).toBeGreaterThan(0);
        else expect(deltas).toBe('');
        expect(ANSWER.startsWith(deltas)).toBe(true);
        expect(stored.status).toBe('failed');
        expect(stored.error.code).toBe(outcome.code);
        expect(stored.output_text).toBe(deltas);
      }
      if (scenario.cancelled) await cancelledUpstream(aborted + 1);
    });
  }

  /** Polls a background response (bounded) until it leaves queued / in_progress. */
  async function settled(id: string): Promise<any> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const reply = await call(app.baseUrl, 'GET', `/v1/responses/${id}`, { key: org.keys.full_access });
      expect(reply.status).toBe(200);
      if (!['queued', 'in_progress'].includes(reply.body.status)) return reply.body;
      if (Date.now() > deadline) throw new Error(`response ${id} never settled`);
      await new Promise((done) => setTimeout(done, 25));
    }
  }

  it('background turns: a cut stream is stored failed with its code, a rate limit retried to completion', async () => {
    const background = (scripts: UpstreamScript[]) => {
      upstream.script(...scripts);
      return call(app.baseUrl, 'POST', '/v1/responses', {
        key: org.keys.full_access,
        body: { model: org.assistantId, input: 'count to ten', background: true },
      });
    };
    const cut = await background([{ text: ANSWER, cutAfterChunks: 4 }]);
    expect(cut.status).toBe(200);
    const cutDone = await settled(cut.body.id);
    expect(cutDone.status).toBe('failed');
    expect(cutDone.error).toMatchObject({ code: 'upstream_stream_interrupted' });
    expect(cutDone.output_text).toBe('one two three four ');

    const limited = await background([{ status: 429, retryAfterMs: '100' }]);
    const limitedDone = await settled(limited.body.id);
    expect(limitedDone).toMatchObject({ status: 'completed', output_text: ANSWER });
  });

  it('finish reason content_filter: incomplete with reason content_filter, usage kept, not retried, streamed and JSON', async () => {
    const filtered: UpstreamScript = { text: 'one two three ', finishReason: 'content_filter' };
    const scenario: Scenario = { name: '', scripts: [filtered], attempts: 1, outcome: { completed: true } };
    const reason = { reason: 'content_filter' };

    const json = await run(scenario, false);
    const reply = json.reply as ApiReply;
    expect(upstream.requests.length - json.sent).toBe(1);
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      status: 'incomplete',
      incomplete_details: reason,
      output_text: 'one two three ',
      error: null,
      completed_at: null,
    });
    expect(reply.body.output[0]).toMatchObject({ type: 'message', status: 'incomplete' });
    expect(reply.body.usage).toMatchObject({ input_tokens: 11, output_tokens: 3 });

    const streamed = await run(scenario, true);
    const stream = streamed.reply as StreamReply;
    expect(upstream.requests.length - streamed.sent).toBe(1);
    const types = stream.events.map((event) => event.json?.type ?? event.data);
    expect(types).not.toContain('response.completed');
    expect(types).not.toContain('response.error');
    expect(types.slice(-2)).toEqual(['response.incomplete', '[DONE]']);
    const end = stream.events.at(-2)?.json.response;
    expect(end).toMatchObject({
      status: 'incomplete',
      incomplete_details: reason,
      output_text: 'one two three ',
    });
    expect(end.usage).toMatchObject({ input_tokens: 11, output_tokens: 3 });

    for (const { userId, id } of [
      { userId: json.userId, id: reply.body.id as string },
      { userId: streamed.userId, id: end.id as string },
    ]) {
      const [row] = await app.dataSource.query(
        'SELECT status, usage FROM responses WHERE organization_id = $1 AND user_id = $2',
        [org.id, userId],
      );
      expect(row.status).toBe('incomplete');
      expect(row.usage).toMatchObject({ input_tokens: 11, output_tokens: 3 });
      const read = await call(app.baseUrl, 'GET', `/v1/responses/${id}`, {
        key: org.keys.full_access,
        headers: { 'x-user-id': userId },
      });
      expect(read.body).toMatchObject({ status: 'incomplete', incomplete_details: reason });
      // Rolled up by the replica's flush (docs/usage.md, "Freshness").
      await app.running.app.get(UsageFlusher).flush();
      const usage = await app.dataSource.query(
        'SELECT SUM(output_tokens)::int AS output FROM usage_daily WHERE organization_id = $1 AND user_id = $2',
        [org.id, userId],
      );
      expect(usage).toEqual([{ output: 3 }]);
    }
  });

  it('a content filter before any text: incomplete and empty, not retried (a filter is not an outage)', async () => {
    const filtered: UpstreamScript = { text: '', finishReason: 'content_filter' };
    for (const stream of [false, true]) {
      const scenario: Scenario = { name: '', scripts: [filtered], attempts: 1, outcome: { completed: true } };
      const { reply, sent } = await run(scenario, stream);
      expect(upstream.requests.length - sent).toBe(1);
      const response = stream
        ? (reply as StreamReply).events.at(-2)?.json.response
        : (reply as ApiReply).body;
      expect(response).toMatchObject({
        status: 'incomplete',
        incomplete_details: { reason: 'content_filter' },
        output_text: '',
      });
    }
  });

  it('waits at least the Retry-After (and retry-after-ms) the upstream asked for', async () => {
    for (const [script, atLeastMs] of [
      [() => ({ status: 429, retryAfter: '1' }), 1000],
      [() => ({ status: 503, retryAfterMs: '400' }), 400],
      // An HTTP date has whole seconds: two seconds ahead is more than one second away.
      [() => ({ status: 429, retryAfter: new Date(Date.now() + 2000).toUTCString() }), 900],
    ] as const) {
      const scenario: Scenario = { name: '', scripts: [script()], attempts: 2, outcome: { completed: true } };
      const { reply, sent } = await run(scenario, false);
      expect((reply as ApiReply).status).toBe(200);
      const [first, second] = upstream.requests.slice(sent);
      // A lower bound only: the retry may come later on a busy machine, never earlier.
      expect(second.at - first.at).toBeGreaterThanOrEqual(atLeastMs - 5);
    }
  });
});
