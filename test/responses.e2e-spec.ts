import { FakeUpstream } from './support/fake-upstream.js';
import { call } from './support/http.js';
import { postStream } from './support/sse.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

const WEATHER_TOOL = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('POST /v1/responses over raw HTTP', () => {
  let app: TestApp;
  let upstream: FakeUpstream;
  let org: SeededOrganization;
  let model: string;

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    app = await startTestApp({
      FAKE_UPSTREAM_KEY: 'sk-upstream-secret',
      SSE_HEARTBEAT_SECONDS: '1',
      UPSTREAM_MAX_RETRIES: '0',
    });
    org = await app.seedOrganization('acme', {
      provider: 'openai-compatible',
      baseUrl: upstream.url,
      model: 'fake-model',
      apiKeyEnv: 'FAKE_UPSTREAM_KEY',
      functionCalling: true,
      timeoutSeconds: 2,
    });
    model = `asst_${org.assistantId}`;
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.stop();
  });

  const respond = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    call(app.baseUrl, 'POST', '/v1/responses', { key: org.keys.assistant, body, headers });

  it('answers a JSON request with a Response object and stores the turn', async () => {
    upstream.script({ text: 'Bonjour tout le monde' });
    const reply = await respond(
      { model, input: 'Say hello in French', instructions: 'Be brief.' },
      { 'x-user-id': 'u-1' },
    );
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      object: 'response',
      status: 'completed',
      model,
      output_text: 'Bonjour tout le monde',
      previous_response_id: null,
      output: [
        {
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Bonjour tout le monde', annotations: [] }],
        },
      ],
    });
    expect(reply.body.id).toMatch(/^resp_[0-9a-f-]{36}$/);
    expect(reply.body.output[0].id).toMatch(/^msg_/);
    expect(typeof reply.body.created_at).toBe('number');
    // JSON as any JSON answer of the API is sent, and the very Response that was stored.
    expect(reply.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const stored = await call(app.baseUrl, 'GET', `/v1/responses/${reply.body.id}`, {
      key: org.keys.user,
      headers: { 'x-user-id': 'u-1' },
    });
    expect(stored.status).toBe(200);
    expect(stored.body).toEqual(reply.body);

    // The upstream got the assistant's instructions, the request's, and the user's message.
    expect(upstream.last.headers.authorization).toBe('Bearer sk-upstream-secret');
    expect(upstream.last.body.model).toBe('fake-model');
    expect(upstream.last.body.messages).toEqual([
      { role: 'system', content: 'You help acme.' },
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Say hello in French' },
    ]);

    const [row] = await app.dataSource.query(
      'SELECT status, output_text, user_id, depth, organization_id FROM responses WHERE id = $1',
      [reply.body.id.slice(5)],
    );
    expect(row).toEqual({
      status: 'completed',
      output_text: 'Bonjour tout le monde',
      user_id: 'u-1',
      depth: 1,
      organization_id: org.id,
    });
    const messages = await app.dataSource.query(
      'SELECT role, content FROM messages WHERE response_id = $1 ORDER BY position',
      [reply.body.id.slice(5)],
    );
    expect(messages).toEqual([
      { role: 'user', content: 'Say hello in French' },
      { role: 'assistant', content: 'Bonjour tout le monde' },
    ]);
  });

  it('streams a text reply in the exact event order, then [DONE], and stores it first', async () => {
    upstream.script({ text: 'one two three' });
    const stream = await postStream(app.baseUrl, org.keys.assistant, { model, input: 'count' });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.headers.get('x-accel-buffering')).toBe('no');
    expect(stream.headers.get('cache-control')).toContain('no-transform');
    expect(stream.headers.get('content-encoding')).toBeNull();

    const types = stream.events.map((event) => event.event ?? event.data);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.output_item.done',
      'response.completed',
      '[DONE]',
    ]);
    const payloads = stream.events.slice(0, -1).map((event) => event.json);
    payloads.forEach((payload, index) => {
      expect(payload.type).toBe(stream.events[index].event);
      expect(payload.sequence_number).toBe(index);
    });
    expect(stream.raw).toMatch(/^event: response\.created\ndata: \{.*\}\n\n/);

    const created = payloads[0].response;
    const completed = payloads[9].response;
    expect(created).toMatchObject({ status: 'in_progress', output: [] });
    expect(payloads[1].response).toEqual(created);
    expect(completed.id).toBe(created.id);
    expect(completed.status).toBe('completed');
    const itemId = payloads[2].item.id;
    expect(payloads[2]).toMatchObject({
      output_index: 0,
      item: { id: itemId, type: 'message', content: [] },
    });
    expect(payloads[3]).toMatchObject({
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text: '' },
    });
    expect(
      payloads
        .slice(4, 7)
        .map((p) => p.delta)
        .join(''),
    ).toBe('one two three');
    expect(payloads[4]).toMatchObject({ item_id: itemId, output_index: 0, content_index: 0, logprobs: [] });
    expect(payloads[7]).toMatchObject({ item_id: itemId, text: 'one two three', logprobs: [] });
    expect(payloads[8].item).toMatchObject({ id: itemId, status: 'completed' });

    // What response.completed carried is what a later read shows.
    const read = await call(app.baseUrl, 'GET', `/v1/responses/${completed.id}`, { key: org.keys.user });
    expect(read.status).toBe(200);
    expect(read.body.output).toEqual(completed.output);
    expect(read.body.output_text).toBe('one two three');
  });

  it('ends a turn with requires_action for a client function call and continues with its output', async () => {
    upstream.script(
      { text: '', toolCalls: [{ id: 'call_abc', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
      { text: 'It is sunny in Paris.' },
    );
    const first = await postStream(app.baseUrl, org.keys.assistant, {
      model,
      input: 'Weather in Paris?',
      tools: [WEATHER_TOOL],
    });
    const types = first.events.map((event) => event.event ?? event.data);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
      '[DONE]',
    ]);
    const done = first.events[5].json;
    expect(done).toMatchObject({
      name: 'get_weather',
      call_id: 'call_abc',
      arguments: '{"city":"Paris"}',
      output_index: 0,
    });
    const completed = first.events[7].json.response;
    expect(completed.status).toBe('requires_action');
    expect(completed.output).toEqual([
      {
        type: 'function_call',
        id: done.item_id,
        call_id: 'call_abc',
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
        status: 'completed',
      },
    ]);
    expect(upstream.last.body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather for a city',
          parameters: WEATHER_TOOL.parameters,
        },
      },
    ]);

    const second = await respond({
      model,
      previous_response_id: completed.id,
      input: [
        {
          type: 'function_call_output',
          call_id: 'call_abc',
          output: '{"sky":"sunny"}',
          status: 'completed',
          id: 'x',
        },
      ],
      tools: [WEATHER_TOOL],
    });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({
      status: 'completed',
      output_text: 'It is sunny in Paris.',
      previous_response_id: completed.id,
    });
    expect(upstream.last.body.messages.slice(1)).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_abc',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_abc', content: '{"sky":"sunny"}' },
    ]);
    // Tool traffic is not chat history.
    const messages = await app.dataSource.query(
      'SELECT role, content FROM messages WHERE conversation_id = $1 ORDER BY created_at, position',
      [second.body.conversation.id],
    );
    expect(messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: 'It is sunny in Paris.' },
    ]);
  });

  it('rejects a function_call_output for an unknown call id, and a missing output, with invalid_request', async () => {
    upstream.script({ toolCalls: [{ id: 'call_pending', name: 'get_weather', arguments: '{}' }] });
    const first = await respond({ model, input: 'go', tools: [WEATHER_TOOL] });
    expect(first.body.status).toBe('requires_action');
    const unknown = await respond({
      model,
      previous_response_id: first.body.id,
      input: [{ type: 'function_call_output', call_id: 'call_other', output: 'x' }],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'invalid_request', type: 'invalid_request_error' });
    expect(unknown.body.error.message).toContain('call_other');
    const missing = await respond({ model, previous_response_id: first.body.id, input: 'never mind' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain('call_pending');
  });

  it('threads three turns: the upstream receives the whole conversation each time', async () => {
    upstream.script({ text: 'A1' }, { text: 'A2' }, { text: 'A3' });
    const one = await respond({ model, input: 'Q1' }, { 'x-user-id': 'thread-user' });
    const two = await respond(
      { model, input: 'Q2', previous_response_id: one.body.id },
      { 'x-user-id': 'thread-user' },
    );
    const three = await respond(
      { model, input: 'Q3', previous_response_id: two.body.id },
      { 'x-user-id': 'thread-user' },
    );
    expect(three.body.output_text).toBe('A3');
    expect(upstream.last.body.messages.slice(1)).toEqual([
      { role: 'user', content: 'Q1' },
      { role: 'assistant', content: 'A1' },
      { role: 'user', content: 'Q2' },
      { role: 'assistant', content: 'A2' },
      { role: 'user', content: 'Q3' },
    ]);
    expect(
      new Set([one.body.conversation.id, two.body.conversation.id, three.body.conversation.id]).size,
    ).toBe(1);
    // Another user cannot continue this thread: same 404 as a missing response.
    const stranger = await respond(
      { model, input: 'hi', previous_response_id: two.body.id },
      { 'x-user-id': 'someone-else' },
    );
    expect(stranger.status).toBe(404);
    expect(stranger.body.error.code).toBe('response_not_found');
  });

  it('sends a continued thread as stored: the same JSON value, keys in the same order, as a new turn', async () => {
    // Text that JSON escapes, and that would end an element if it were cut naively.
    const tricky = 'say "hi" }, {"role": "user"} \\ ü 😀\nline';
    upstream.script({ text: `A1 ${tricky}` }, { text: 'A2' }, { text: 'A3' });
    const params = { temperature: 0.25, tools: [WEATHER_TOOL], tool_choice: 'auto' };
    const one = await respond({ model, input: `Q1 ${tricky}`, instructions: 'Be brief.', ...params });
    const fresh = upstream.last;
    const two = await respond({ model, input: 'Q2', previous_response_id: one.body.id, ...params });
    const streamed = await postStream(app.baseUrl, org.keys.assistant, {
      model,
      input: 'Q3',
      previous_response_id: two.body.id,
      stream: true,
      ...params,
    });
    expect(streamed.status).toBe(200);
    const sent = upstream.last;
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.headers.authorization).toBe('Bearer sk-upstream-secret');
    // The same parameters in the same order as the new turn's body, only `messages` longer.
    expect(Object.keys(sent.body)).toEqual(Object.keys(fresh.body));
    expect({ ...sent.body, messages: undefined }).toEqual({ ...fresh.body, messages: undefined });
    expect(sent.body.messages).toEqual([
      { role: 'system', content: 'You help acme.' },
      { role: 'user', content: `Q1 ${tricky}` },
      { role: 'assistant', content: `A1 ${tricky}` },
      { role: 'user', content: 'Q2' },
      { role: 'assistant', content: 'A2' },
      { role: 'user', content: 'Q3' },
    ]);
  });

  it('gives two concurrent continuations of one response their own branches', async () => {
    upstream.script({ text: 'root' });
    const root = await respond({ model, input: 'root question' });
    upstream.script({ text: 'left', delayMs: 50 }, { text: 'right', delayMs: 50 });
    const [left, right] = await Promise.all([
      respond({ model, input: 'L', previous_response_id: root.body.id }),
      respond({ model, input: 'R', previous_response_id: root.body.id }),
    ]);
    expect(left.status).toBe(200);
    expect(right.status).toBe(200);
    upstream.script({ text: 'after left' });
    await respond({ model, input: 'L2', previous_response_id: left.body.id });
    const seen = upstream.last.body.messages.slice(1).map((m: { content: string }) => m.content);
    expect(seen[0]).toBe('root question');
    expect(seen).toContain('L2');
    // The left branch never sees the right branch's turn.
    expect(seen.filter((c: string) => c === 'R' || c === 'L').length).toBe(1);
    const rows = await app.dataSource.query(
      'SELECT count(*)::int AS n FROM responses WHERE previous_response_id = $1',
      [root.body.id.slice(5)],
    );
    expect(rows[0].n).toBe(2);
  });

  it('ends a stream that fails midway with response.error and stores the response as failed', async () => {
    upstream.script({ text: 'partial words then boom never', failAfterChunks: 2 });
    const stream = await postStream(app.baseUrl, org.keys.assistant, { model, input: 'fail please' });
    expect(stream.status).toBe(200);
    const last = stream.events[stream.events.length - 1];
    expect(last.event).toBe('response.error');
    expect(last.json.error).toEqual({
      type: 'server_error',
      code: 'upstream_stream_interrupted',
      message: expect.any(String),
    });
    expect(stream.raw).not.toContain('[DONE]');
    const id = stream.events[0].json.response.id.slice(5);
    const [row] = await app.dataSource.query(
      'SELECT status, error, output_text FROM responses WHERE id = $1',
      [id],
    );
    expect(row.status).toBe('failed');
    expect(row.error.code).toBe('upstream_stream_interrupted');
    expect(row.output_text).toBe('partial words ');
    const history = await app.dataSource.query('SELECT role FROM messages WHERE response_id = $1', [id]);
    expect(history).toEqual([{ role: 'user' }]);
  });

  it('maps an upstream error to 503 upstream_unavailable and a silent upstream to 503 upstream_timeout', async () => {
    upstream.script({ status: 500 });
    const failed = await respond({ model, input: 'x' });
    expect(failed.status).toBe(503);
    expect(failed.body.error).toEqual({
      type: 'server_error',
      code: 'upstream_unavailable',
      message: expect.any(String),
    });
    expect(JSON.stringify(failed.body)).not.toContain('scripted failure');

    upstream.script({ hang: true });
    const slow = await respond({ model, input: 'x' });
    expect(slow.status).toBe(503);
    expect(slow.body.error.code).toBe('upstream_timeout');
  });

  it('sends heartbeats while the upstream is quiet', async () => {
    upstream.script({ text: 'late', delayMs: 1500 });
    const stream = await postStream(app.baseUrl, org.keys.assistant, { model, input: 'slow' });
    expect(stream.comments).toContain(': heartbeat');
    expect(stream.events[stream.events.length - 1].data).toBe('[DONE]');
  });

  it('aborts the upstream call when the client disconnects and stores the response as failed', async () => {
    upstream.script({ text: 'a b c d e f g h i j k l m n o p', tokenDelayMs: 100 });
    const abortedBefore = upstream.aborted;
    const controller = new AbortController();
    const res = await fetch(`${app.baseUrl}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': org.keys.assistant },
      body: JSON.stringify({ model, input: 'long', stream: true }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    const first = await reader.read();
    const id = /"id":"resp_([0-9a-f-]{36})"/.exec(new TextDecoder().decode(first.value))![1];
    controller.abort();
    await waitFor(() => Promise.resolve(upstream.aborted > abortedBefore));
    await waitFor(async () => {
      const rows = await app.dataSource.query('SELECT status FROM responses WHERE id = $1', [id]);
      return rows[0]?.status === 'failed';
    });
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('condition not met in time');
}
