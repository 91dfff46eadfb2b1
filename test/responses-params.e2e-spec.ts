import { FakeUpstream } from './support/fake-upstream.js';
import { call } from './support/http.js';
import { expectValidResponse, expectValidStreamEvents } from './support/open-responses.js';
import { postStream } from './support/sse.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

const WEATHER_TOOL = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

const CITY_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, degrees: { type: 'integer' } },
  required: ['city', 'degrees'],
  additionalProperties: false,
};

/**
 * Every request parameter that shapes the model's output is sent to the upstream in Chat
 * Completions terms, stored and echoed, or refused by name (docs/api.md, "Request parameters").
 */
describe('POST /v1/responses parameters against an OpenAI-compatible upstream', () => {
  let app: TestApp;
  let upstream: FakeUpstream;
  let org: SeededOrganization;
  let model: string;

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    app = await startTestApp({ UPSTREAM_MAX_RETRIES: '0' });
    org = await app.seedOrganization('params', {
      provider: 'openai-compatible',
      baseUrl: upstream.url,
      model: 'fake-model',
      functionCalling: true,
      temperature: 0.3,
      maxOutputTokensLimit: 1000,
    });
    model = `asst_${org.assistantId}`;
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.stop();
  });

  const respond = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    call(app.baseUrl, 'POST', '/v1/responses', { key: org.keys.assistant, body, headers });
  const get = (id: string) => call(app.baseUrl, 'GET', `/v1/responses/${id}`, { key: org.keys.user });
  const rawGet = async (id: string) =>
    (await fetch(`${app.baseUrl}/v1/responses/${id}`, { headers: { 'x-api-key': org.keys.user } })).text();

  it('forwards sampling, length, format, reasoning and identity fields, and echoes them', async () => {
    upstream.script({ text: '{"city":"Oslo","degrees":-3}' });
    const reply = await respond({
      model,
      input: 'Weather in Oslo as JSON',
      temperature: 0.7,
      top_p: 0.9,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      max_output_tokens: 200,
      text: {
        format: { type: 'json_schema', name: 'weather', schema: CITY_SCHEMA, strict: true },
        verbosity: 'low',
      },
      reasoning: { effort: 'high', summary: 'auto' },
      user: 'end-user-1',
      safety_identifier: 'hash-of-user',
      prompt_cache_key: 'weather-prompts',
      service_tier: 'flex',
      metadata: { ticket: 'T-1', team: 'support' },
    });
    expect(reply.status).toBe(200);
    expect(upstream.last.body).toMatchObject({
      model: 'fake-model',
      temperature: 0.7,
      top_p: 0.9,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      max_tokens: 200,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'weather', schema: CITY_SCHEMA, strict: true },
      },
      verbosity: 'low',
      reasoning_effort: 'high',
      user: 'end-user-1',
      safety_identifier: 'hash-of-user',
      prompt_cache_key: 'weather-prompts',
      service_tier: 'flex',
    });
    // Metadata and storage stay here: they are not the upstream's business.
    expect(upstream.last.body).not.toHaveProperty('metadata');
    expect(upstream.last.body).not.toHaveProperty('store');

    const response = reply.body;
    expectValidResponse(response);
    expect(response).toMatchObject({
      status: 'completed',
      output_text: '{"city":"Oslo","degrees":-3}',
      temperature: 0.7,
      top_p: 0.9,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      max_output_tokens: 200,
      // The specification's Response carries the format without its schema.
      text: {
        format: { type: 'json_schema', name: 'weather', description: null, schema: null, strict: true },
        verbosity: 'low',
      },
      reasoning: { effort: 'high', summary: 'auto' },
      user: 'end-user-1',
      safety_identifier: 'hash-of-user',
      prompt_cache_key: 'weather-prompts',
      service_tier: 'flex',
      metadata: { ticket: 'T-1', team: 'support' },
      store: true,
      background: false,
      truncation: 'disabled',
      tool_choice: 'auto',
    });
    expect(typeof response.completed_at).toBe('number');
    // GET returns the very bytes the client was sent (same fields, same key order).
    const raw = await rawGet(response.id);
    expect(raw).toBe(JSON.stringify(response));
  });

  it('uses the assistant’s defaults where the request is silent, and echoes them', async () => {
    upstream.script({ text: 'ok' });
    const reply = await respond({ model, input: 'hi' });
    expect(upstream.last.body.temperature).toBe(0.3);
    expect(upstream.last.body.max_tokens).toBe(1000);
    expect(upstream.last.body).not.toHaveProperty('response_format');
    expect(upstream.last.body).not.toHaveProperty('tool_choice');
    expect(reply.body).toMatchObject({
      temperature: 0.3,
      top_p: 1,
      max_output_tokens: 1000,
      text: { format: { type: 'text' } },
      reasoning: null,
      metadata: {},
      parallel_tool_calls: true,
    });
    expectValidResponse(reply.body);
  });

  it('stores the streamed Response byte for byte, with created, in_progress and completed events', async () => {
    upstream.script({ text: 'Streamed and stored.' });
    const stream = await postStream(app.baseUrl, org.keys.assistant, {
      model,
      input: 'hi',
      temperature: 1.2,
      metadata: { source: 'stream' },
    });
    expectValidStreamEvents(stream.events);
    const types = stream.events.map((event) => event.event);
    expect(types.slice(0, 2)).toEqual(['response.created', 'response.in_progress']);
    const created = stream.events[0].json.response;
    expect(created).toMatchObject({
      status: 'in_progress',
      temperature: 1.2,
      metadata: { source: 'stream' },
    });
    const completed = stream.events.find((event) => event.event === 'response.completed')!;
    const response = completed.json.response;
    expect(response).toMatchObject({ status: 'completed', temperature: 1.2, metadata: { source: 'stream' } });
    expect(await rawGet(response.id)).toBe(JSON.stringify(response));
    expect((await get(response.id)).body.metadata).toEqual({ source: 'stream' });
  });

  it('asks the upstream for log probabilities when the response includes them', async () => {
    upstream.script({ text: 'two words', logprobs: true });
    const reply = await respond({
      model,
      input: 'hi',
      top_logprobs: 2,
      include: ['message.output_text.logprobs'],
    });
    expect(upstream.last.body).toMatchObject({ logprobs: true, top_logprobs: 2 });
    const part = reply.body.output[0].content[0];
    expect(part.logprobs).toHaveLength(2);
    expect(part.logprobs[0]).toMatchObject({
      token: 'two ',
      logprob: -0.25,
      top_logprobs: [{ token: 'two ' }, { token: 'alt1' }],
    });
    expect(reply.body.top_logprobs).toBe(2);
    expectValidResponse(reply.body);
  });

  it('turns reasoning_content into reasoning items with their events, kept in the thread and counted', async () => {
    upstream.script({
      reasoning: 'The user greets me, so I greet back.',
      text: 'Hello there.',
      reasoningTokens: 9,
      cachedTokens: 4,
    });
    const stream = await postStream(app.baseUrl, org.keys.assistant, { model, input: 'hi' });
    expectValidStreamEvents(stream.events);
    const types = stream.events.map((event) => event.event);
    expect(types.slice(2, 6)).toEqual([
      'response.output_item.added',
      'response.content_part.added',
      'response.reasoning.delta',
      'response.reasoning.delta',
    ]);
    // The Open Responses names; the official SDKs (x-stainless-lang) get response.reasoning_text.*.
    expect(types).toContain('response.reasoning.done');
    const response = stream.events.find((event) => event.event === 'response.completed')!.json.response;
    expect(response.output[0]).toMatchObject({
      type: 'reasoning',
      id: expect.stringMatching(/^rs_/),
      summary: [],
      content: [{ type: 'reasoning_text', text: 'The user greets me, so I greet back.' }],
    });
    expect(response.output[1]).toMatchObject({ type: 'message', content: [{ text: 'Hello there.' }] });
    expect(response.output_text).toBe('Hello there.');
    expect(response.usage).toMatchObject({
      input_tokens_details: { cached_tokens: 4 },
      output_tokens_details: { reasoning_tokens: 9 },
    });
    expect((await get(response.id)).body.output[0].type).toBe('reasoning');

    // Ollama's field name works the same.
    upstream.script({ reasoning: 'Thinking.', reasoningField: 'reasoning', text: 'Done.' });
    const next = await respond({ model, input: 'again', previous_response_id: response.id });
    expect(next.body.output.map((item: { type: string }) => item.type)).toEqual(['reasoning', 'message']);
  });

  it('accepts reasoning items a client sends back with its history, without resending them upstream', async () => {
    upstream.script({ text: 'Still here.' });
    const reply = await respond({
      model,
      input: [
        { role: 'user', content: 'hi' },
        {
          type: 'reasoning',
          id: 'rs_client_1',
          summary: [],
          content: [{ type: 'reasoning_text', text: 'They greet me.' }],
        },
        { role: 'assistant', content: 'Hello!' },
        { role: 'user', content: 'still there?' },
      ],
    });
    expect(reply.status).toBe(200);
    expect(upstream.last.body.messages.slice(1)).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: 'still there?' },
    ]);
    const items = await call(app.baseUrl, 'GET', `/v1/responses/${reply.body.id}/input_items?order=asc`, {
      key: org.keys.user,
    });
    expect(items.body.data[1]).toEqual({
      id: 'rs_client_1',
      type: 'reasoning',
      summary: [],
      content: [{ type: 'reasoning_text', text: 'They greet me.' }],
    });
  });

  it('ends a reply cut by max_output_tokens as incomplete, in JSON and in the stream', async () => {
    upstream.script({ text: 'This reply is cut', finishReason: 'length' });
    const reply = await respond({ model, input: 'long story', max_output_tokens: 16 });
    expect(upstream.last.body.max_tokens).toBe(16);
    expect(reply.body).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      output_text: 'This reply is cut',
      completed_at: null,
    });
    expect(reply.body.output[0].status).toBe('incomplete');
    expectValidResponse(reply.body);
    expect((await get(reply.body.id)).body.status).toBe('incomplete');

    upstream.script({ text: 'Cut again', finishReason: 'length' });
    const stream = await postStream(app.baseUrl, org.keys.assistant, {
      model,
      input: 'long',
      max_output_tokens: 16,
    });
    expectValidStreamEvents(stream.events);
    const types = stream.events.map((event) => event.event ?? event.data);
    expect(types).not.toContain('response.completed');
    expect(types.slice(-2)).toEqual(['response.incomplete', '[DONE]']);
    expect(stream.events.at(-2)!.json.response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
  });

  it('names the parameter the upstream model refused, as a 400', async () => {
    upstream.script({ status: 400, errorParam: 'reasoning_effort' });
    const reply = await respond({ model, input: 'x', reasoning: { effort: 'high' } });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toEqual({
      type: 'invalid_request_error',
      code: 'invalid_request',
      message: 'reasoning.effort is not supported by the model behind this assistant',
    });
  });

  it('refuses max_output_tokens above the assistant’s limit', async () => {
    const reply = await respond({ model, input: 'hi', max_output_tokens: 5000 });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toEqual({
      type: 'invalid_request_error',
      code: 'invalid_request',
      message: "max_output_tokens 5000 is above this assistant's limit of 1000",
    });
  });

  describe('tool_choice and parallel_tool_calls', () => {
    it('sends required, then the function call’s output continues the thread', async () => {
      upstream.script(
        { toolCalls: [{ id: 'call_req', name: 'get_weather', arguments: '{"city":"Oslo"}' }] },
        { text: 'Cold.' },
      );
      const first = await respond({
        model,
        input: 'weather?',
        tools: [WEATHER_TOOL],
        tool_choice: 'required',
        parallel_tool_calls: false,
      });
      expect(upstream.last.body).toMatchObject({ tool_choice: 'required', parallel_tool_calls: false });
      expect(first.body).toMatchObject({
        status: 'requires_action',
        tool_choice: 'required',
        parallel_tool_calls: false,
      });
      const second = await respond({
        model,
        previous_response_id: first.body.id,
        input: [{ type: 'function_call_output', call_id: 'call_req', output: '{"temp":-3}' }],
        tools: [WEATHER_TOOL],
      });
      expect(second.body.output_text).toBe('Cold.');
      expect(upstream.last.body).not.toHaveProperty('tool_choice');
    });

    it('sends a named function and none as the upstream’s forms, echoed as sent', async () => {
      upstream.script({
        toolCalls: [{ id: 'call_named', name: 'get_weather', arguments: '{"city":"Rome"}' }],
      });
      const named = await respond({
        model,
        input: 'weather?',
        tools: [WEATHER_TOOL],
        tool_choice: { type: 'function', name: 'get_weather' },
      });
      expect(upstream.last.body.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
      expect(named.body.tool_choice).toEqual({ type: 'function', name: 'get_weather' });

      upstream.script({ text: 'No tools today.' });
      const none = await respond({ model, input: 'weather?', tools: [WEATHER_TOOL], tool_choice: 'none' });
      expect(upstream.last.body.tool_choice).toBe('none');
      expect(none.body).toMatchObject({ status: 'completed', tool_choice: 'none' });
    });

    it('forces a server tool on the first call of the loop only, and honours max_tool_calls', async () => {
      upstream.script(
        {
          toolCalls: [
            { id: 'call_m1', name: 'save_to_memory', arguments: '{"content":"Likes tea"}' },
            { id: 'call_m2', name: 'save_to_memory', arguments: '{"content":"Lives in Oslo"}' },
          ],
        },
        { text: 'Noted.' },
      );
      const reply = await respond(
        { model, input: 'I like tea and live in Oslo', tool_choice: 'required', max_tool_calls: 1 },
        { 'x-user-id': 'tool-loop-user' },
      );
      expect(reply.body).toMatchObject({ status: 'completed', output_text: 'Noted.', max_tool_calls: 1 });
      const [first, second] = upstream.requests.slice(-2).map((request) => request.body);
      expect(first.tool_choice).toBe('required');
      expect(second).not.toHaveProperty('tool_choice');
      // The call beyond max_tool_calls was answered with an error, not run; no server tools were offered again.
      expect(second.messages.slice(-2)).toEqual([
        { role: 'tool', tool_call_id: 'call_m1', content: expect.any(String) },
        {
          role: 'tool',
          tool_call_id: 'call_m2',
          content: JSON.stringify({ error: 'Not run: the response reached its max_tool_calls' }),
        },
      ]);
      expect(second.tools ?? []).toEqual([]);
      const saved = await app.dataSource.query(
        `SELECT content FROM memory_items WHERE user_id = 'tool-loop-user'`,
      );
      expect(saved).toEqual([{ content: 'Likes tea' }]);
    });

    it('offers only the allowed tools of allowed_tools, with its mode', async () => {
      const TIME_TOOL = { ...WEATHER_TOOL, name: 'get_time', description: 'The time in a city' };
      upstream.script({
        toolCalls: [{ id: 'call_allowed', name: 'get_time', arguments: '{"city":"Oslo"}' }],
      });
      const choice = {
        type: 'allowed_tools',
        mode: 'required',
        tools: [{ type: 'function', name: 'get_time' }],
      };
      const reply = await respond({
        model,
        input: 'time?',
        tools: [WEATHER_TOOL, TIME_TOOL],
        tool_choice: choice,
      });
      expect(upstream.last.body.tools.map((tool: any) => tool.function.name)).toEqual(['get_time']);
      expect(upstream.last.body.tool_choice).toBe('required');
      expect(reply.body).toMatchObject({ status: 'requires_action', tool_choice: choice });
      expect(reply.body.tools.map((tool: any) => tool.name)).toEqual(['get_weather', 'get_time']);
    });

    it('refuses a named function that is neither the request’s nor the assistant’s', async () => {
      const reply = await respond({
        model,
        input: 'x',
        tools: [WEATHER_TOOL],
        tool_choice: { type: 'function', name: 'get_time' },
      });
      expect(reply.status).toBe(400);
      expect(reply.body.error.message).toBe(
        'tool_choice names the function "get_time", which is neither a tool of this request nor of the assistant',
      );
    });
  });

  it('sends json_object as the upstream’s response_format', async () => {
    upstream.script({ text: '{"ok":true}' });
    const reply = await respond({ model, input: 'json please', text: { format: { type: 'json_object' } } });
    expect(upstream.last.body.response_format).toEqual({ type: 'json_object' });
    expect(reply.body.text).toEqual({ format: { type: 'json_object' } });
  });

  describe('store: false', () => {
    it('runs the turn without keeping it: GET and previous_response_id give 404, no history', async () => {
      upstream.script({ text: 'Not kept.' });
      const reply = await respond(
        { model, input: 'secret question', store: false },
        { 'x-user-id': 'no-store-user' },
      );
      expect(reply.body).toMatchObject({
        status: 'completed',
        output_text: 'Not kept.',
        store: false,
        conversation: null,
      });
      expectValidResponse(reply.body);
      expect((await get(reply.body.id)).status).toBe(404);
      const next = await respond(
        { model, input: 'and?', previous_response_id: reply.body.id },
        { 'x-user-id': 'no-store-user' },
      );
      expect(next.status).toBe(404);
      expect(next.body.error.code).toBe('response_not_found');
      const history = await call(app.baseUrl, 'GET', '/v1/chat/history/conversations', {
        key: org.keys.user,
        headers: { 'x-user-id': 'no-store-user' },
      });
      expect(history.body).toEqual([]);
      const rows = await app.dataSource.query(`SELECT count(*)::int AS n FROM responses WHERE id = $1`, [
        reply.body.id.slice('resp_'.length),
      ]);
      expect(rows).toEqual([{ n: 0 }]);
      // save_to_memory is not offered to a turn that leaves nothing behind.
      const offered = (upstream.requests.at(-1)!.body.tools ?? []).map((tool: any) => tool.function.name);
      expect(offered).not.toContain('save_to_memory');
    });
  });

  describe('metadata limits', () => {
    const metadataError = async (metadata: unknown) => {
      const reply = await respond({ model, input: 'x', metadata });
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe('invalid_request');
      return reply.body.error.message as string;
    };

    it('accepts 16 keys of 64 characters with 512-character values', async () => {
      upstream.script({ text: 'ok' });
      const metadata = Object.fromEntries(
        Array.from({ length: 16 }, (_, index) => [`${index}`.padEnd(64, 'k'), 'v'.repeat(512)]),
      );
      const reply = await respond({ model, input: 'x', metadata });
      expect(reply.status).toBe(200);
      expect(reply.body.metadata).toEqual(metadata);
    });

    it('refuses 17 keys, a 65-character key, a 513-character value, a non-string value', async () => {
      const seventeen = Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`k${index}`, 'v']));
      expect(await metadataError(seventeen)).toBe('metadata may have at most 16 keys (got 17)');
      expect(await metadataError({ ['k'.repeat(65)]: 'v' })).toMatch(
        /^metadata keys may be at most 64 characters/,
      );
      expect(await metadataError({ note: 'v'.repeat(513) })).toBe(
        'metadata.note may be at most 512 characters (got 513)',
      );
      expect(await metadataError({ count: 3 })).toBe('metadata.count must be a string');
      expect(await metadataError(['a'])).toBe('metadata must be an object of string values');
    });
  });

  it('refuses, by name, each parameter it cannot honour or that is malformed', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ temperature: 3 }, 'temperature must be a number from 0 to 2'],
      [{ top_p: -0.1 }, 'top_p must be a number from 0 to 1'],
      [{ max_output_tokens: 0 }, 'max_output_tokens must be a number from 1 to 10000000'],
      [{ max_output_tokens: 2.5 }, 'max_output_tokens must be an integer from 1 to 10000000'],
      [{ top_logprobs: 21 }, 'top_logprobs must be a number from 0 to 20'],
      [
        { background: true, store: false },
        'background: true needs the response to be stored (store must not be false)',
      ],
      [
        { prompt: { id: 'pmpt_1' } },
        'prompt (stored prompt templates) is not supported; send instructions instead',
      ],
      [{ seed: 4 }, 'Unknown parameter: seed'],
      [{ include: ['everything'] }, 'include: unknown value "everything"'],
      [{ tool_choice: 'sometimes' }, 'tool_choice must be one of "auto", "none", "required"'],
      [
        { tool_choice: { type: 'mcp', server_label: 'x' } },
        expect.stringMatching(/^tool_choice of type "mcp" is not available here/),
      ],
      [
        { text: { format: { type: 'xml' } } },
        'text.format.type must be "text", "json_object" or "json_schema"',
      ],
      [
        { text: { format: { type: 'json_schema', name: 'a b', schema: {} } } },
        'text.format.name must match ^[a-zA-Z0-9_-]{1,64}$',
      ],
      [
        { text: { format: { type: 'json_schema', name: 'x' } } },
        'text.format.schema must be a JSON Schema object',
      ],
      [{ text: { verbosity: 'loud' } }, 'text.verbosity must be one of "low", "medium", "high"'],
      [{ reasoning: { effort: 'extreme' } }, expect.stringMatching(/^reasoning.effort must be one of/)],
      [{ truncation: 'sometimes' }, 'truncation must be one of "auto", "disabled"'],
      [{ store: 'no' }, 'store must be true or false'],
      [{ service_tier: 'gold' }, expect.stringMatching(/^service_tier must be one of/)],
      [{ safety_identifier: 'x'.repeat(65) }, 'safety_identifier must be a string of at most 64 characters'],
      [{ parallel_tool_calls: 'yes' }, 'parallel_tool_calls must be true or false'],
      [{ max_tool_calls: 0 }, 'max_tool_calls must be a number from 1 to 10000'],
    ];
    for (const [fields, message] of cases) {
      const reply = await respond({ model, input: 'x', ...fields });
      expect({
        fields,
        status: reply.status,
        code: reply.body.error?.code,
        message: reply.body.error?.message,
      }).toEqual({
        fields,
        status: 400,
        code: 'invalid_request',
        message,
      });
    }
  });

  describe('truncation and the context window', () => {
    let org: SeededOrganization;
    let model: string;

    beforeAll(async () => {
      org = await app.seedOrganization('window', {
        provider: 'openai-compatible',
        baseUrl: upstream.url,
        model: 'fake-model',
        functionCalling: true,
        contextWindow: 120,
      });
      model = `asst_${org.assistantId}`;
    });

    const respond = (body: Record<string, unknown>) =>
      call(app.baseUrl, 'POST', '/v1/responses', { key: org.keys.assistant, body });

    /** Three turns of about 50 tokens each: more than the 120-token window together. */
    async function longThread(): Promise<string> {
      let previous: string | undefined;
      for (const turn of ['one', 'two', 'three']) {
        upstream.script({ text: `answer ${turn} ${'x'.repeat(80)}` });
        const reply = await respond({
          model,
          input: `question ${turn} ${'y'.repeat(80)}`,
          truncation: 'auto',
          ...(previous ? { previous_response_id: previous } : {}),
        });
        expect(reply.status).toBe(200);
        previous = reply.body.id as string;
      }
      return previous!;
    }

    it('auto leaves the oldest turns out so the prompt fits, keeping instructions and the newest turn', async () => {
      const previous = await longThread();
      upstream.script({ text: 'fits' });
      const reply = await respond({
        model,
        input: 'question four',
        truncation: 'auto',
        previous_response_id: previous,
      });
      expect(reply.body).toMatchObject({ status: 'completed', truncation: 'auto' });
      const sent = upstream.last.body.messages.map((message: { content: string }) => message.content);
      expect(sent[0]).toBe('You help window.');
      expect(sent.at(-1)).toBe('question four');
      expect(sent.some((content: string) => content.startsWith('question one'))).toBe(false);
      expect(sent.some((content: string) => content.startsWith('question three'))).toBe(true);
    });

    it('disabled (the default) turns the upstream’s context error into 400 context_length_exceeded', async () => {
      const previous = await longThread();
      upstream.script({ text: 'never', maxPromptChars: 200 });
      const reply = await respond({ model, input: 'question four', previous_response_id: previous });
      expect(reply.status).toBe(400);
      expect(reply.body.error).toMatchObject({
        type: 'invalid_request_error',
        code: 'context_length_exceeded',
      });

      upstream.script({ text: 'never', maxPromptChars: 200 });
      const stream = await postStream(app.baseUrl, org.keys.assistant, {
        model,
        input: 'question four',
        previous_response_id: previous,
      });
      const last = stream.events.at(-1)!;
      expect(last.event).toBe('response.error');
      expect(last.json.error.code).toBe('context_length_exceeded');
      expect(stream.events.at(-2)!.event).toBe('response.failed');
      expect(stream.events.at(-2)!.json.response).toMatchObject({
        status: 'failed',
        error: { code: 'context_length_exceeded' },
      });
    });
  });
});
