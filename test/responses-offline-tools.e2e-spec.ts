import { call } from './support/http.js';
import { expectValidResponse } from './support/open-responses.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

const WEATHER_TOOL = {
  type: 'function',
  name: 'get_weather',
  description: 'Get the current weather for a location',
  parameters: {
    type: 'object',
    properties: { location: { type: 'string', description: 'The city and state' } },
    required: ['location'],
  },
};

/**
 * The offline model under `tool_choice: "auto"` (docs/architecture.md, "The offline model"):
 * it calls an offered function named after what the user asks, answers the output in words,
 * leaves matching script rules in charge and calls nothing when no name matches.
 */
describe('offline model: function calls it chooses itself', () => {
  let app: TestApp;
  let plain: SeededOrganization;
  let scripted: SeededOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    plain = await app.seedOrganization('plain');
    scripted = await app.seedOrganization('scripted', {
      provider: 'offline',
      script: [{ match: 'weather', reply: 'Scripted: always sunny.' }],
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  const create = async (org: SeededOrganization, body: Record<string, unknown>) => {
    const reply = await call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.assistant,
      body: { model: `asst_${org.assistantId}`, ...body },
    });
    expect(reply.status).toBe(200);
    expectValidResponse(reply.body);
    return reply.body;
  };

  it('calls the function whose name matches the question, with arguments from the message', async () => {
    const response = await create(plain, {
      input: "What's the weather like in San Francisco?",
      tools: [{ ...WEATHER_TOOL, name: 'get_stock_price' }, WEATHER_TOOL],
    });
    const calls = response.output.filter((item: any) => item.type === 'function_call');
    expect(calls).toHaveLength(1);
    expect(calls[0].name).toBe('get_weather');
    expect(JSON.parse(calls[0].arguments)).toEqual({ location: 'San Francisco' });
  });

  it('answers the function_call_output in words', async () => {
    const first = await create(plain, { input: 'Weather in Oslo?', tools: [WEATHER_TOOL] });
    const callItem = first.output.find((item: any) => item.type === 'function_call');
    const second = await create(plain, {
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: callItem.call_id, output: '{"temp_c":4}' }],
      tools: [WEATHER_TOOL],
    });
    expect(second.status).toBe('completed');
    expect(second.output.map((item: any) => item.type)).toEqual(['message']);
    expect(second.output_text).toBe('The tool get_weather returned: {"temp_c":4}');
  });

  it('answers in text when no offered name matches', async () => {
    const response = await create(plain, { input: 'Say hello in three words.', tools: [WEATHER_TOOL] });
    expect(response.output.map((item: any) => item.type)).toEqual(['message']);
    expect(response.output_text).toBe('You said: Say hello in three words.');
  });

  it('leaves a matching script rule in charge', async () => {
    const response = await create(scripted, { input: "What's the weather in Rome?", tools: [WEATHER_TOOL] });
    expect(response.output.map((item: any) => item.type)).toEqual(['message']);
    expect(response.output_text).toBe('Scripted: always sunny.');
  });

  it('calls nothing under tool_choice "none"', async () => {
    const response = await create(plain, {
      input: "What's the weather in Rome?",
      tools: [WEATHER_TOOL],
      tool_choice: 'none',
    });
    expect(response.output.map((item: any) => item.type)).toEqual(['message']);
  });
});
