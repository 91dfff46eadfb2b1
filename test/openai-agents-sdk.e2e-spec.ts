import { Agent, OpenAIResponsesModel, run, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai-v7';
import { z } from 'zod';
import { FakeUpstream } from './support/fake-upstream.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

/**
 * The OpenAI Agents SDK drives its own function-call loop: it keeps the history itself and sends
 * it back whole (user message, `function_call`, `function_call_output` with its extra fields),
 * streamed or not. Both must complete against our /v1.
 */
describe('the OpenAI Agents SDK against /v1', () => {
  let app: TestApp;
  let upstream: FakeUpstream;
  let org: SeededOrganization;
  let agent: Agent;
  const lookups: string[] = [];

  beforeAll(async () => {
    setTracingDisabled(true);
    upstream = await new FakeUpstream().start();
    app = await startTestApp({ UPSTREAM_MAX_RETRIES: '0' });
    org = await app.seedOrganization('agents-sdk', {
      provider: 'openai-compatible',
      baseUrl: upstream.url,
      model: 'fake-model',
      functionCalling: true,
    });
    const client = new OpenAI({ apiKey: org.keys.assistant, baseURL: `${app.baseUrl}/v1`, maxRetries: 0 });
    const getWeather = tool({
      name: 'get_weather',
      description: 'Weather for a city',
      parameters: z.object({ city: z.string() }),
      execute: ({ city }) => {
        lookups.push(city);
        return `${city}: -3 °C, snow`;
      },
    });
    agent = new Agent({
      name: 'Weather agent',
      instructions: 'Answer weather questions with the get_weather tool.',
      // The SDK's OpenAI client type is its own copy of openai 7.x: the same class at runtime.
      model: new OpenAIResponsesModel(client as never, `asst_${org.assistantId}`),
      tools: [getWeather],
    });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.stop();
  });
  beforeEach(() => {
    lookups.length = 0;
  });

  const scriptWeatherLoop = (callId: string) =>
    upstream.script(
      { toolCalls: [{ id: callId, name: 'get_weather', arguments: '{"city":"Oslo"}' }] },
      { text: 'Oslo has snow at -3 °C.' },
    );

  it('completes a function-call loop with run()', async () => {
    scriptWeatherLoop('call_agents_1');
    const result = await run(agent, 'What is the weather in Oslo?');

    expect(result.finalOutput).toBe('Oslo has snow at -3 °C.');
    expect(lookups).toEqual(['Oslo']);
    // The second model call saw the whole loop the Agents SDK sent back.
    const messages = upstream.last.body.messages;
    expect(messages[0]).toMatchObject({ role: 'system' });
    expect(messages.slice(-3)).toEqual([
      { role: 'user', content: 'What is the weather in Oslo?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_agents_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Oslo"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_agents_1', content: 'Oslo: -3 °C, snow' },
    ]);
  });

  it('completes a function-call loop with run(..., { stream: true })', async () => {
    scriptWeatherLoop('call_agents_2');
    const result = await run(agent, 'What is the weather in Oslo?', { stream: true });
    let text = '';
    for await (const event of result.toTextStream()) text += event;
    await result.completed;

    expect(result.error).toBeNull();
    expect(text).toBe('Oslo has snow at -3 °C.');
    expect(result.finalOutput).toBe('Oslo has snow at -3 °C.');
    expect(lookups).toEqual(['Oslo']);
  });

  it('honours outputType (structured output) and modelSettings end to end', async () => {
    const Forecast = z.object({ city: z.string(), degrees: z.number().int() });
    const forecaster = new Agent({
      name: 'Forecaster',
      instructions: 'Answer with a forecast.',
      model: agent.model,
      outputType: Forecast,
      modelSettings: {
        temperature: 0.4,
        topP: 0.8,
        maxTokens: 120,
        parallelToolCalls: false,
        toolChoice: 'auto',
        reasoning: { effort: 'low' },
        text: { verbosity: 'low' },
        truncation: 'auto',
        store: true,
      },
    });
    upstream.script({ text: '{"city":"Oslo","degrees":-3}' });
    const result = await run(forecaster, 'Forecast for Oslo?');

    expect(result.finalOutput).toEqual({ city: 'Oslo', degrees: -3 });
    const sent = upstream.last.body;
    expect(sent).toMatchObject({
      temperature: 0.4,
      top_p: 0.8,
      max_tokens: 120,
      reasoning_effort: 'low',
      verbosity: 'low',
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'output',
          strict: true,
          schema: { type: 'object', required: ['city', 'degrees'] },
        },
      },
    });
    const stored = await fetch(`${app.baseUrl}/v1/responses/${result.lastResponseId}`, {
      headers: { 'x-api-key': org.keys.user },
    }).then((res) => res.json());
    expect(stored).toMatchObject({
      temperature: 0.4,
      top_p: 0.8,
      max_output_tokens: 120,
      truncation: 'auto',
      text: { format: { type: 'json_schema', name: 'output', strict: true }, verbosity: 'low' },
      reasoning: { effort: 'low' },
    });
  });

  it('continues a conversation from the last response id', async () => {
    scriptWeatherLoop('call_agents_3');
    const first = await run(agent, 'What is the weather in Oslo?');
    upstream.script({ text: 'Yes, take a warm coat.' });
    const second = await run(agent, 'Do I need a coat?', { previousResponseId: first.lastResponseId });

    expect(second.finalOutput).toBe('Yes, take a warm coat.');
    const messages = upstream.last.body.messages;
    expect(messages.at(-1)).toEqual({ role: 'user', content: 'Do I need a coat?' });
    expect(messages).toContainEqual({
      role: 'tool',
      tool_call_id: 'call_agents_3',
      content: 'Oslo: -3 °C, snow',
    });
  });
});
