import { FakeUpstream } from './support/fake-upstream.js';
import { call } from './support/http.js';
import { postStream } from './support/sse.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

/**
 * An upstream's text with a lone UTF-16 surrogate, or a pair cut across two chunks
 * (docs/resilience.md#malformed-text): PostgreSQL's jsonb cannot hold a lone surrogate, so the
 * provider repairs the text before it reaches the client or the store. A cut pair reaches the
 * client whole; a truly lone surrogate becomes U+FFFD; the turn completes and is stored as relayed.
 */
describe('lone and split UTF-16 surrogates in model output', () => {
  let upstream: FakeUpstream;
  let app: TestApp;
  let org: SeededOrganization;

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    app = await startTestApp({ UPSTREAM_KEY: 'sk-test' });
    org = await app.seedOrganization('surrogates', {
      provider: 'openai-compatible',
      baseUrl: upstream.url,
      model: 'gpt-test',
      apiKeyEnv: 'UPSTREAM_KEY',
    });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.stop();
  });

  /** The Response as GET returns it from the store. */
  async function stored(id: string) {
    const reply = await call(app.baseUrl, 'GET', `/v1/responses/${id}`, { key: org.keys.full_access });
    expect(reply.status).toBe(200);
    return reply.body;
  }

  function textOf(response: any): string {
    return response.output
      .filter((item: any) => item.type === 'message')
      .flatMap((item: any) => item.content.map((part: any) => part.text))
      .join('');
  }

  it('relays a pair split across two stream chunks whole, and stores the completed turn', async () => {
    upstream.script({ textChunks: ['Smile \ud83d', '\ude00 done.'] });
    const reply = await postStream(app.baseUrl, org.keys.full_access, {
      model: org.assistantId,
      input: 'smile',
    });
    expect(reply.status).toBe(200);
    const completed = reply.events.find((event) => event.event === 'response.completed')?.json.response;
    expect(completed?.status).toBe('completed');
    const deltas = reply.events
      .filter((event) => event.event === 'response.output_text.delta')
      .map((event) => event.json.delta as string);
    // Every delta is text a client can show on its own: no half of a pair in any of them.
    expect(deltas.every((delta) => delta.isWellFormed())).toBe(true);
    expect(deltas.join('')).toBe('Smile \u{1F600} done.');
    const row = await stored(completed.id);
    expect(row.status).toBe('completed');
    expect(textOf(row)).toBe('Smile \u{1F600} done.');
  });

  it('replaces truly lone surrogates with U+FFFD in a JSON turn, the answer as stored', async () => {
    upstream.script({ textChunks: ['a\ud800', 'b \udc00 c \ud83d'] });
    const reply = await call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.full_access,
      body: { model: org.assistantId, input: 'break it' },
    });
    expect(reply.status).toBe(200);
    expect(reply.body.status).toBe('completed');
    expect(textOf(reply.body)).toBe('a\uFFFDb \uFFFD c \uFFFD');
    const row = await stored(reply.body.id);
    expect(row.status).toBe('completed');
    expect(textOf(row)).toBe('a\uFFFDb \uFFFD c \uFFFD');
  });

  it('keeps a pair cut between two function-call argument deltas, and repairs a lone one', async () => {
    // The fake upstream streams arguments eight code units at a time: the emoji's pair is cut.
    upstream.script({
      toolCalls: [
        { id: 'call_1', name: 'lookup', arguments: '{"q":"a\u{1F600}"}' },
        { id: 'call_2', name: 'lookup', arguments: '{"q":"\udc00"}' },
      ],
    });
    const reply = await call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.full_access,
      body: {
        model: org.assistantId,
        input: 'look it up',
        tools: [
          {
            type: 'function',
            name: 'lookup',
            parameters: { type: 'object', properties: { q: { type: 'string' } } },
          },
        ],
      },
    });
    expect(reply.status).toBe(200);
    // The turn ended as a client function call does: waiting for the client's outputs.
    expect(reply.body.status).toBe('requires_action');
    const calls = (body: any) =>
      body.output.filter((item: any) => item.type === 'function_call').map((item: any) => item.arguments);
    expect(calls(reply.body)).toEqual(['{"q":"a\u{1F600}"}', '{"q":"\uFFFD"}']);
    expect(calls(await stored(reply.body.id))).toEqual(calls(reply.body));
  });
});
