import { FakeUpstream, type UpstreamScript } from './support/fake-upstream.js';
import { ANSWER } from './support/upstream-fault-scenarios.js';
import { call, type ApiReply } from './support/http.js';
import { postStream, type StreamReply } from './support/sse.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';
import { UsageFlusher } from '../src/usage/usage-flusher.service.js';

/**
 * Fallback targets (docs/resilience.md): a primary that fails before its first output hands the
 * call to the next target invisibly, streamed and JSON; after output it never does. The turn is
 * stored with its true status, usage priced as the answering target, and every attempt. The
 * primary is one fake upstream; the fallbacks ("small" and "large" windows) share another.
 */

interface Expected {
  /** Requests each upstream receives. */
  primary: number;
  fallback: number;
  /** The fallback model that answers (its request's `model`), or the failure the client hears. */
  answeredBy?: 'small-model' | 'large-model';
  failure?: { code: string; status: number; message: RegExp; afterOutput?: boolean };
  /** Outcomes of the stored attempts, in order. */
  attempts: string[];
}

interface FailoverScenario {
  name: string;
  primary: UpstreamScript[];
  /** What the primary answers to every request of the scenario (a persistent failure). */
  primaryAlways?: UpstreamScript;
  expected: Expected;
  /** What a JSON client gets, where it differs (it has seen nothing of a cut answer). */
  json?: Expected;
}

const SCENARIOS: FailoverScenario[] = [
  {
    name: '429 with Retry-After on the primary: the fallback answers at once',
    primary: [{ status: 429, retryAfter: '30' }],
    expected: {
      primary: 1,
      fallback: 1,
      answeredBy: 'small-model',
      attempts: ['upstream_rate_limited', 'completed'],
    },
  },
  {
    name: '429 without Retry-After: the fallback answers',
    primary: [{ status: 429 }],
    expected: {
      primary: 1,
      fallback: 1,
      answeredBy: 'small-model',
      attempts: ['upstream_rate_limited', 'completed'],
    },
  },
  {
    name: '503 persistent: the fallback answers',
    primary: [],
    primaryAlways: { status: 503 },
    expected: {
      primary: 1,
      fallback: 1,
      answeredBy: 'small-model',
      attempts: ['upstream_unavailable', 'completed'],
    },
  },
  {
    name: 'TCP reset before the headers: the fallback answers',
    primary: [{ reset: true }],
    expected: {
      primary: 1,
      fallback: 1,
      answeredBy: 'small-model',
      attempts: ['upstream_unavailable', 'completed'],
    },
  },
  {
    name: 'slow first token: the first-token deadline moves the call to the fallback',
    primary: [{ text: ANSWER, firstTokenDelayMs: 4000 }],
    expected: {
      primary: 1,
      fallback: 1,
      answeredBy: 'small-model',
      attempts: ['upstream_timeout', 'completed'],
    },
  },
  {
    name: 'stream cut before its first delta: the fallback answers',
    primary: [{ text: ANSWER, cutAfterChunks: 0 }],
    expected: {
      primary: 1,
      fallback: 1,
      answeredBy: 'small-model',
      attempts: ['upstream_stream_interrupted', 'completed'],
    },
  },
  {
    name: 'stream cut after output: streamed, an explicit failure; JSON, the fallback answers',
    primary: [{ text: ANSWER, failAfterChunks: 3 }],
    json: {
      primary: 1,
      fallback: 1,
      answeredBy: 'small-model',
      attempts: ['upstream_stream_interrupted', 'completed'],
    },
    expected: {
      primary: 1,
      fallback: 0,
      failure: {
        code: 'upstream_stream_interrupted',
        status: 502,
        message: /cut mid-answer|broke mid-answer/,
        afterOutput: true,
      },
      attempts: ['upstream_stream_interrupted'],
    },
  },
  {
    name: 'context length exceeded: the target with a larger window answers',
    primary: [{ text: ANSWER, maxPromptChars: 5 }],
    expected: {
      primary: 1,
      fallback: 1,
      answeredBy: 'large-model',
      attempts: ['context_length_exceeded', 'completed'],
    },
  },
  {
    name: 'content-policy refusal: a clean 400 with the reason, never retried nor failed over',
    primary: [
      { status: 400, errorCode: 'content_policy_violation', errorMessage: 'Flagged by the safety system' },
    ],
    expected: {
      primary: 1,
      fallback: 0,
      failure: { code: 'content_policy_violation', status: 400, message: /Flagged by the safety system/ },
      attempts: ['content_policy_violation'],
    },
  },
];

describe('fallback targets, streamed and JSON', () => {
  let primary: FakeUpstream;
  let fallback: FakeUpstream;
  let app: TestApp;
  let org: SeededOrganization;
  let user = 0;

  beforeAll(async () => {
    primary = await new FakeUpstream().start();
    fallback = await new FakeUpstream().start();
    primary.setFallback({ text: ANSWER });
    fallback.setFallback({ text: ANSWER });
    app = await startTestApp({
      PRIMARY_KEY: 'sk-primary',
      FALLBACK_KEY: 'sk-fallback',
      UPSTREAM_MAX_RETRIES: '2',
      UPSTREAM_HEADERS_TIMEOUT_MS: '1500',
      UPSTREAM_FIRST_TOKEN_TIMEOUT_MS: '1000',
      UPSTREAM_STALL_TIMEOUT_MS: '1000',
      // Every scenario fails the primary: breakers are tested in upstream-breakers.e2e-spec.ts.
      UPSTREAM_BREAKER_FAILURES: '0',
    });
    org = await app.seedOrganization('failover', {
      provider: 'openai-compatible',
      baseUrl: primary.url,
      model: 'primary-model',
      apiKeyEnv: 'PRIMARY_KEY',
      contextWindow: 8000,
      prices: { currency: 'USD', inputPerMillion: 1, outputPerMillion: 1 },
      fallbacks: [
        {
          baseUrl: fallback.url,
          model: 'small-model',
          apiKeyEnv: 'FALLBACK_KEY',
          contextWindow: 4000,
          prices: { currency: 'EUR', inputPerMillion: 1, outputPerMillion: 1 },
        },
        { baseUrl: fallback.url, model: 'large-model', apiKeyEnv: 'FALLBACK_KEY', contextWindow: 128000 },
      ],
    });
  });
  afterAll(async () => {
    await app?.close();
    await primary?.stop();
    await fallback?.stop();
  });

  async function stored(userId: string) {
    const rows = await app.dataSource.query(
      'SELECT status, error, output_text, usage, upstream_attempts FROM responses WHERE organization_id = $1 AND user_id = $2',
      [org.id, userId],
    );
    expect(rows).toHaveLength(1);
    return rows[0];
  }

  async function run(scenario: FailoverScenario, stream: boolean) {
    const userId = `user-${++user}`;
    const sent = { primary: primary.requests.length, fallback: fallback.requests.length };
    primary.clearScripts().script(...scenario.primary);
    if (scenario.primaryAlways) primary.setFallback(scenario.primaryAlways);
    const body = { model: org.assistantId, input: 'count to ten' };
    const headers = { 'x-user-id': userId };
    const reply = stream
      ? await postStream(app.baseUrl, org.keys.full_access, body, headers)
      : await call(app.baseUrl, 'POST', '/v1/responses', { key: org.keys.full_access, body, headers });
    primary.setFallback({ text: ANSWER });
    const expected = (!stream && scenario.json) || scenario.expected;
    expect(primary.requests.length - sent.primary).toBe(expected.primary);
    expect(fallback.requests.length - sent.fallback).toBe(expected.fallback);
    if (expected.answeredBy) {
      expect(fallback.last.body.model).toBe(expected.answeredBy);
      expect(fallback.last.headers.authorization).toBe('Bearer sk-fallback');
    }
    const row = await stored(userId);
    expect(row.upstream_attempts.map((attempt: { outcome: string }) => attempt.outcome)).toEqual(
      expected.attempts,
    );
    expect(row.upstream_attempts[0]).toMatchObject({ model: 'primary-model', index: 0 });
    const answering = row.upstream_attempts.filter((attempt: { answered?: boolean }) => attempt.answered);
    if (expected.answeredBy) {
      expect(answering).toEqual([
        expect.objectContaining({ model: expected.answeredBy, outcome: 'completed' }),
      ]);
      expect(row.status).toBe('completed');
      expect(row.output_text).toBe(ANSWER);
      expect(row.usage.output_tokens).toBeGreaterThan(0);
    } else {
      expect(row.status).toBe('failed');
      expect(row.error.code).toBe(expected.failure?.code);
    }
    return { reply, row, userId };
  }

  for (const scenario of SCENARIOS) {
    it(`JSON: ${scenario.name}`, async () => {
      const { reply } = await run(scenario, false);
      const json = reply as ApiReply;
      const failure = (scenario.json ?? scenario.expected).failure;
      if (!failure) {
        expect(json.status).toBe(200);
        expect(json.body).toMatchObject({ status: 'completed', output_text: ANSWER });
        expect(json.body.usage.output_tokens).toBeGreaterThan(0);
        return;
      }
      expect(json.status).toBe(failure.status);
      expect(json.body.error).toMatchObject({
        code: failure.code,
        message: expect.stringMatching(failure.message),
      });
      if (failure.status === 400) expect(json.headers.get('retry-after')).toBeNull();
    });

    it(`streamed: ${scenario.name}`, async () => {
      const { reply } = await run(scenario, true);
      const stream = reply as StreamReply;
      const types = stream.events.map((event) => event.json?.type ?? event.data);
      const deltas = stream.events
        .filter((event) => event.json?.type === 'response.output_text.delta')
        .map((event) => event.json.delta as string)
        .join('');
      const failure = scenario.expected.failure;
      if (!failure) {
        expect(deltas).toBe(ANSWER);
        expect(types).toContain('response.completed');
        expect(types).not.toContain('response.error');
        return;
      }
      expect(types).not.toContain('response.completed');
      const last = stream.events[stream.events.length - 1].json;
      expect(last.type).toBe('response.error');
      expect(last.error).toMatchObject({
        code: failure.code,
        message: expect.stringMatching(failure.message),
      });
      if (failure.afterOutput) expect(deltas.length).toBeGreaterThan(0);
      else expect(deltas).toBe('');
      expect(ANSWER.startsWith(deltas)).toBe(true);
    });
  }

  it("prices the turn's usage as the target that answered, and counts it under that target's model", async () => {
    const { userId } = await run(SCENARIOS[1], false);
    await app.running.app.get(UsageFlusher).flush();
    const rows = await app.dataSource.query(
      'SELECT currency FROM usage_daily WHERE organization_id = $1 AND user_id = $2',
      [org.id, userId],
    );
    expect(rows.map((row: { currency: string }) => row.currency)).toEqual(['EUR']);
    const hourly = await app.dataSource.query(
      'SELECT model, currency FROM usage_hourly WHERE organization_id = $1 AND user_id = $2',
      [org.id, userId],
    );
    expect(hourly).toEqual([{ model: 'small-model', currency: 'EUR' }]);
  });

  it('a content filter ending the answer is never failed over: incomplete from the primary, JSON and streamed', async () => {
    for (const stream of [false, true]) {
      const userId = `user-${++user}`;
      const sent = fallback.requests.length;
      primary.script({ text: 'one two three ', finishReason: 'content_filter' });
      const body = { model: org.assistantId, input: 'count to ten' };
      const headers = { 'x-user-id': userId };
      const response = stream
        ? (await postStream(app.baseUrl, org.keys.full_access, body, headers)).events.at(-2)?.json.response
        : (await call(app.baseUrl, 'POST', '/v1/responses', { key: org.keys.full_access, body, headers }))
            .body;
      expect(response).toMatchObject({
        status: 'incomplete',
        incomplete_details: { reason: 'content_filter' },
        output_text: 'one two three ',
      });
      expect(fallback.requests.length).toBe(sent);
      const row = await stored(userId);
      expect(row.status).toBe('incomplete');
      expect(row.upstream_attempts).toEqual([
        expect.objectContaining({ model: 'primary-model', outcome: 'completed', answered: true }),
      ]);
    }
  });

  it('every target failing: the last failure, every attempt stored', async () => {
    const userId = `user-${++user}`;
    primary.script({ status: 503 });
    // The last target retries (UPSTREAM_MAX_RETRIES); the others fail over at once.
    fallback.script({ status: 503 }, { status: 503 }, { status: 503 }, { status: 503 });
    const reply = await call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.full_access,
      body: { model: org.assistantId, input: 'count to ten' },
      headers: { 'x-user-id': userId },
    });
    expect(reply.status).toBe(503);
    expect(reply.body.error.code).toBe('upstream_unavailable');
    const row = await stored(userId);
    expect(row.status).toBe('failed');
    expect(row.upstream_attempts).toEqual([
      expect.objectContaining({ model: 'primary-model', outcome: 'upstream_unavailable', httpStatus: 503 }),
      expect.objectContaining({ model: 'small-model', outcome: 'upstream_unavailable', httpStatus: 503 }),
      expect.objectContaining({ model: 'large-model', outcome: 'upstream_unavailable', httpStatus: 503 }),
    ]);
  });
});
