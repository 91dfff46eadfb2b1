import { FakeUpstream, type UpstreamScript } from './support/fake-upstream.js';
import { ANSWER } from './support/upstream-fault-scenarios.js';
import { call, type ApiReply } from './support/http.js';
import { postStream } from './support/sse.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

/**
 * Continuation (docs/resilience.md#continuation): with `model.failover.continuation`, a stream
 * cut or stalled after its output started is finished by the next target, at most once — by a
 * prefill to a target declared `prefill: true`, else by replaying the answer — and the client
 * reads one answer, every word once. A refused prefill or a diverging replay ends the turn with
 * the ORIGINAL failure; after a tool call nothing is continued. Real fake upstreams over HTTP.
 */

const CUT = 4; // words of ANSWER the client has when the primary breaks
const SENT = ANSWER.split(' ').slice(0, CUT).join(' ') + ' ';
const TOOLS = [
  {
    type: 'function',
    name: 'lookup',
    parameters: { type: 'object', properties: { q: { type: 'string' } } },
  },
];

interface Case {
  name: string;
  org: 'prefill' | 'replay';
  primary: UpstreamScript;
  fallback?: UpstreamScript;
  tools?: boolean;
  /** The whole answer arrives, or the turn fails with this code after the sent words. */
  failure?: string;
  attempts: { outcome: string; continuation?: string }[];
  /** What the fallback is sent last: the sent text as a prefill, or the original conversation. */
  lastMessage?: { role: string; content?: string };
}

/** The primary cut mid-answer; the fallback refuses the prefill and replays `text`. */
function prefillRefused(name: string, text: string, replay: string): Case {
  return {
    name,
    org: 'prefill',
    primary: { text: ANSWER, cutAfterChunks: CUT },
    fallback: { text, prefill: 'reject' },
    attempts: [
      { outcome: 'upstream_stream_interrupted' },
      { outcome: 'invalid_request', continuation: 'prefill' },
      { outcome: replay, continuation: 'replay' },
    ],
  };
}

const CASES: Case[] = [
  {
    name: 'a stream cut mid-answer is continued by a prefill to the next target',
    org: 'prefill',
    primary: { text: ANSWER, cutAfterChunks: CUT },
    attempts: [{ outcome: 'upstream_stream_interrupted' }, { outcome: 'completed', continuation: 'prefill' }],
    lastMessage: { role: 'assistant', content: SENT.trimEnd() },
  },
  {
    name: 'a stream stalled mid-answer is continued by a prefill',
    org: 'prefill',
    primary: { text: ANSWER, stallAfterChunks: CUT },
    attempts: [{ outcome: 'upstream_stream_stalled' }, { outcome: 'completed', continuation: 'prefill' }],
    lastMessage: { role: 'assistant', content: SENT.trimEnd() },
  },
  {
    name: 'a target without prefill replays the answer; the words the client has are not repeated',
    org: 'replay',
    primary: { text: ANSWER, cutAfterChunks: CUT },
    attempts: [{ outcome: 'upstream_stream_interrupted' }, { outcome: 'completed', continuation: 'replay' }],
    lastMessage: { role: 'user' },
  },
  prefillRefused('a fallback that rejects the prefill replays instead', ANSWER, 'completed'),
  {
    ...prefillRefused(
      'a rejected prefill and a diverging replay: the ORIGINAL cut is the error',
      'a different answer altogether',
      'replay_diverged',
    ),
    failure: 'upstream_stream_interrupted',
  },
  {
    name: 'never after a tool call: the cut fails the turn',
    org: 'prefill',
    primary: {
      text: 'Let me look.',
      toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"ten"}' }],
      cutAfterToolCall: true,
    },
    tools: true,
    failure: 'upstream_stream_interrupted',
    attempts: [{ outcome: 'upstream_stream_interrupted' }],
  },
];

describe('continuation of a stream cut after its output started', () => {
  let primary: FakeUpstream;
  let fallback: FakeUpstream;
  let app: TestApp;
  const orgs = {} as Record<Case['org'], SeededOrganization>;
  let user = 0;

  beforeAll(async () => {
    primary = await new FakeUpstream().start();
    fallback = await new FakeUpstream().start();
    app = await startTestApp({
      UPSTREAM_MAX_RETRIES: '0',
      UPSTREAM_HEADERS_TIMEOUT_MS: '1500',
      UPSTREAM_FIRST_TOKEN_TIMEOUT_MS: '1500',
      UPSTREAM_STALL_TIMEOUT_MS: '800',
      UPSTREAM_BREAKER_FAILURES: '0',
    });
    for (const kind of ['prefill', 'replay'] as const) {
      orgs[kind] = await app.seedOrganization(`continue-${kind}`, {
        provider: 'openai-compatible',
        baseUrl: primary.url,
        model: 'primary-model',
        fallbacks: [{ baseUrl: fallback.url, model: 'fallback-model', prefill: kind === 'prefill' }],
        failover: { continuation: true },
      });
    }
  });
  afterAll(async () => {
    await app?.close();
    await primary?.stop();
    await fallback?.stop();
  });

  for (const scenario of CASES) {
    it(`streamed: ${scenario.name}`, async () => {
      const org = orgs[scenario.org];
      const userId = `user-${++user}`;
      primary.clearScripts().script(scenario.primary);
      fallback.clearScripts().setFallback(scenario.fallback ?? { text: ANSWER, prefill: 'continue' });
      const before = fallback.requests.length;
      const body = {
        model: org.assistantId,
        input: 'count to ten',
        ...(scenario.tools ? { tools: TOOLS } : {}),
      };
      const reply = await postStream(app.baseUrl, org.keys.full_access, body, { 'x-user-id': userId });
      const types = reply.events.map((event) => event.json?.type);
      const deltas = reply.events
        .filter((event) => event.json?.type === 'response.output_text.delta')
        .map((event) => event.json.delta as string)
        .join('');
      const [row] = await app.dataSource.query(
        'SELECT status, error, output_text, upstream_attempts FROM responses WHERE organization_id = $1 AND user_id = $2',
        [org.id, userId],
      );
      expect(
        row.upstream_attempts.map((attempt: { outcome: string; continuation?: string }) => ({
          outcome: attempt.outcome,
          ...(attempt.continuation ? { continuation: attempt.continuation } : {}),
        })),
      ).toEqual(scenario.attempts);
      if (scenario.failure) {
        const last = reply.events[reply.events.length - 1].json;
        expect(last.type).toBe('response.error');
        expect(last.error.code).toBe(scenario.failure);
        expect(types).not.toContain('response.completed');
        expect(row.status).toBe('failed');
        expect(row.error.code).toBe(scenario.failure);
        return;
      }
      // One seamless answer: every word exactly once, then a clean completion.
      expect(deltas).toBe(ANSWER);
      expect(types).toContain('response.completed');
      expect(types).not.toContain('response.error');
      expect(row).toMatchObject({ status: 'completed', output_text: ANSWER });
      expect(fallback.requests.length - before).toBe(scenario.attempts.length - 1);
      if (scenario.lastMessage) {
        const messages = fallback.last.body.messages;
        expect(messages[messages.length - 1]).toMatchObject(scenario.lastMessage);
      }
    });
  }

  it('JSON: a cut after output moves on to the next target invisibly, the whole answer returned', async () => {
    const org = orgs.prefill;
    const userId = `user-${++user}`;
    primary.clearScripts().script({ text: ANSWER, cutAfterChunks: CUT });
    fallback.clearScripts().setFallback({ text: ANSWER, prefill: 'continue' });
    const reply: ApiReply = await call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.full_access,
      body: { model: org.assistantId, input: 'count to ten' },
      headers: { 'x-user-id': userId },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ status: 'completed', output_text: ANSWER });
    // A restart, not a continuation: the fallback is asked the conversation as it was.
    const messages = fallback.last.body.messages;
    expect(messages[messages.length - 1].role).toBe('user');
  });
});
