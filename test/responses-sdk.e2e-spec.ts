import OpenAIv6 from 'openai';
import OpenAIv4 from 'openai-v4';
import OpenAIv7 from 'openai-v7';
import { FakeUpstream } from './support/fake-upstream.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

/** The official SDK, several majors side by side: every stream must satisfy each one's helper. */
const SDKS: [string, any][] = [
  ['openai 4.x', OpenAIv4],
  ['openai 6.x', OpenAIv6],
  ['openai 7.x', OpenAIv7],
];

const WEATHER_TOOL = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
  strict: true,
};

describe.each(SDKS)('the official SDK (%s) against /v1', (_label, OpenAI) => {
  let app: TestApp;
  let upstream: FakeUpstream;
  let org: SeededOrganization;
  let client: any;
  let model: string;

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    app = await startTestApp({ UPSTREAM_MAX_RETRIES: '0' });
    org = await app.seedOrganization('sdk', {
      provider: 'openai-compatible',
      baseUrl: upstream.url,
      model: 'fake-model',
      functionCalling: true,
    });
    model = `asst_${org.assistantId}`;
    client = new OpenAI({ apiKey: org.keys.assistant, baseURL: `${app.baseUrl}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.stop();
  });

  it('responses.create returns the reply as JSON', async () => {
    upstream.script({ text: 'Plain JSON answer' });
    const response = await client.responses.create({ model, input: 'hi' });
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe('Plain JSON answer');
    expect(response.id).toMatch(/^resp_/);
  });

  it('responses.create({stream:true}) yields the events of spec 6.3', async () => {
    upstream.script({ text: 'streamed words here' });
    const stream = await client.responses.create({ model, input: 'hi', stream: true });
    const types: string[] = [];
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    expect(types[0]).toBe('response.created');
    expect(types[types.length - 1]).toBe('response.completed');
    expect(types).not.toContain('response.status');
    expect(text).toBe('streamed words here');
  });

  it('responses.stream(...).finalResponse() accepts a text reply', async () => {
    upstream.script({ text: 'final answer text' });
    const deltas: string[] = [];
    const stream = client.responses.stream({ model, input: 'hi' });
    stream.on('response.output_text.delta', (event: { delta: string }) => deltas.push(event.delta));
    const final = await stream.finalResponse();
    expect(final.output_text).toBe('final answer text');
    expect(deltas.join('')).toBe('final answer text');
    expect(final.output[0]).toMatchObject({
      type: 'message',
      content: [{ type: 'output_text', text: 'final answer text' }],
    });
  });

  it('runs a function-call round trip through the stream helper', async () => {
    upstream.script(
      { toolCalls: [{ id: 'call_sdk_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }] },
      { text: 'Oslo is cold.' },
    );
    const first = await client.responses
      .stream({ model, input: 'Weather in Oslo?', tools: [WEATHER_TOOL] })
      .finalResponse();
    expect(first.status).toBe('requires_action');
    const call = first.output.find((item: { type: string }) => item.type === 'function_call');
    expect(call).toMatchObject({ call_id: 'call_sdk_1', name: 'get_weather', arguments: '{"city":"Oslo"}' });

    const second = await client.responses
      .stream({
        model,
        previous_response_id: first.id,
        input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"temp":-3}' }],
        tools: [WEATHER_TOOL],
      })
      .finalResponse();
    expect(second.status).toBe('completed');
    expect(second.output_text).toBe('Oslo is cold.');
    expect(upstream.last.body.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_sdk_1',
      content: '{"temp":-3}',
    });
  });

  it('continues a three-turn thread with previous_response_id', async () => {
    upstream.script({ text: 'one' }, { text: 'two' }, { text: 'three' });
    let previous: string | undefined;
    for (const question of ['first?', 'second?', 'third?']) {
      const response = await client.responses
        .stream({ model, input: question, ...(previous ? { previous_response_id: previous } : {}) })
        .finalResponse();
      previous = response.id;
    }
    const sent = upstream.last.body.messages.map((m: { content: string }) => m.content);
    expect(sent).toEqual(['You help sdk.', 'first?', 'one', 'second?', 'two', 'third?']);
  });

  it('surfaces a mid-stream upstream failure as an API error', async () => {
    upstream.script({ text: 'this will break soon enough', failAfterChunks: 2 });
    const error = await client.responses
      .stream({ model, input: 'break' })
      .finalResponse()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(String(error.message)).toContain('upstream');
  });

  it('reports errors before the stream as HTTP errors with the envelope', async () => {
    await expect(
      client.responses.create({ model: 'not-a-uuid', input: 'x', stream: true }),
    ).rejects.toMatchObject({
      status: 400,
      error: { code: 'invalid_model', type: 'invalid_request_error' },
    });
  });
});
