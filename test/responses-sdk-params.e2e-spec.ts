import { Ajv } from 'ajv';
import OpenAIv6 from 'openai';
import { zodTextFormat as zodTextFormatV6 } from 'openai/helpers/zod';
import OpenAIv4 from 'openai-v4';
import OpenAIv7 from 'openai-v7';
import { zodTextFormat as zodTextFormatV7 } from 'openai-v7/helpers/zod';
import { z } from 'zod';
import { FakeUpstream } from './support/fake-upstream.js';
import { expectValidResponse, expectValidStreamEvents } from './support/open-responses.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

const Weather = z.object({
  city: z.string(),
  degrees: z.number().int(),
  conditions: z.array(z.enum(['sun', 'rain', 'snow'])),
});

const WEATHER_JSON_SCHEMA = {
  type: 'object',
  properties: {
    city: { type: 'string' },
    degrees: { type: 'integer' },
    conditions: { type: 'array', items: { type: 'string', enum: ['sun', 'rain', 'snow'] } },
  },
  required: ['city', 'degrees', 'conditions'],
  additionalProperties: false,
};

/**
 * openai 4.x's zod helper needs zod 3 (the project's dev dependency is zod 4), so that major's
 * `responses.parse` is driven with the equivalent hand-written json_schema format; the SDK still
 * parses `output_parsed` from the reply.
 */
const SDKS: [string, any, ((schema: typeof Weather, name: string) => unknown) | null][] = [
  ['openai 4.x', OpenAIv4, null],
  ['openai 6.x', OpenAIv6, zodTextFormatV6],
  ['openai 7.x', OpenAIv7, zodTextFormatV7],
];

const WEATHER_TOOL = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } },
    required: ['city', 'unit'],
    additionalProperties: false,
  },
  strict: true,
};

describe.each(SDKS)(
  'the official SDK (%s): parameters, structured outputs, reasoning',
  (label, OpenAI, zodFormat) => {
    let app: TestApp;
    let upstream: FakeUpstream;
    let upstreamOrg: SeededOrganization;
    let offlineOrg: SeededOrganization;
    let client: any;
    let offline: any;
    let model: string;
    let offlineModel: string;
    const format = () =>
      zodFormat
        ? zodFormat(Weather, 'weather')
        : { type: 'json_schema', name: 'weather', schema: WEATHER_JSON_SCHEMA, strict: true };

    beforeAll(async () => {
      upstream = await new FakeUpstream().start();
      app = await startTestApp({ UPSTREAM_MAX_RETRIES: '0' });
      upstreamOrg = await app.seedOrganization('sdk-params', {
        provider: 'openai-compatible',
        baseUrl: upstream.url,
        model: 'fake-model',
        functionCalling: true,
      });
      offlineOrg = await app.seedOrganization('sdk-offline', {
        provider: 'offline',
        functionCalling: true,
        script: [{ match: 'think', reasoning: 'Let me think this through.', reply: 'Thought it through.' }],
      });
      model = `asst_${upstreamOrg.assistantId}`;
      offlineModel = `asst_${offlineOrg.assistantId}`;
      client = new OpenAI({
        // Creating and reading back: full_access (the `assistant` scope only creates).
        apiKey: upstreamOrg.keys.full_access,
        baseURL: `${app.baseUrl}/v1`,
        maxRetries: 0,
      });
      offline = new OpenAI({
        apiKey: offlineOrg.keys.full_access,
        baseURL: `${app.baseUrl}/v1`,
        maxRetries: 0,
      });
    });
    afterAll(async () => {
      await app?.close();
      await upstream?.stop();
    });

    it('responses.parse returns output_parsed from the upstream’s structured reply', async () => {
      upstream.script({ text: '{"city":"Oslo","degrees":-3,"conditions":["snow"]}' });
      const response = await client.responses.parse({
        model,
        input: 'Weather in Oslo?',
        text: { format: format() },
      });
      expect(response.output_parsed).toEqual({ city: 'Oslo', degrees: -3, conditions: ['snow'] });
      const sent = upstream.last.body.response_format;
      expect(sent).toMatchObject({ type: 'json_schema', json_schema: { name: 'weather', strict: true } });
      expect(sent.json_schema.schema).toMatchObject({
        type: 'object',
        required: ['city', 'degrees', 'conditions'],
        additionalProperties: false,
      });
      expectValidResponse(response);
    });

    it('responses.parse on the offline model answers with a value of the schema', async () => {
      const response = await offline.responses.parse({
        model: offlineModel,
        input: 'Weather?',
        text: { format: format() },
      });
      expect(Weather.parse(response.output_parsed)).toEqual(response.output_parsed);
      expect(response.output_parsed.conditions.length).toBeGreaterThan(0);
    });

    it('sends sampling, length, tool and identity parameters, echoed on the Response', async () => {
      upstream.script({
        toolCalls: [{ id: 'call_p', name: 'get_weather', arguments: '{"city":"Oslo","unit":"c"}' }],
      });
      const response = await client.responses.create({
        model,
        input: 'Weather in Oslo?',
        tools: [WEATHER_TOOL],
        tool_choice: { type: 'function', name: 'get_weather' },
        parallel_tool_calls: false,
        temperature: 0.2,
        top_p: 0.5,
        max_output_tokens: 64,
        metadata: { origin: 'sdk' },
        safety_identifier: 'user-hash',
        prompt_cache_key: 'cache-1',
      });
      expect(upstream.last.body).toMatchObject({
        temperature: 0.2,
        top_p: 0.5,
        max_tokens: 64,
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
        parallel_tool_calls: false,
        safety_identifier: 'user-hash',
        prompt_cache_key: 'cache-1',
      });
      expect(upstream.last.body.tools[0].function).toMatchObject({ name: 'get_weather', strict: true });
      expect(response).toMatchObject({
        status: 'requires_action',
        temperature: 0.2,
        top_p: 0.5,
        max_output_tokens: 64,
        tool_choice: { type: 'function', name: 'get_weather' },
        parallel_tool_calls: false,
        metadata: { origin: 'sdk' },
      });
      const retrieved = await client.responses.retrieve(response.id);
      expect(retrieved).toEqual(response);
    });

    it('the offline model answers a forced function choice with arguments of its schema', async () => {
      const validate = new Ajv().compile(WEATHER_TOOL.parameters);
      for (const tool_choice of ['required', { type: 'function', name: 'get_weather' }]) {
        const response = await offline.responses.create({
          model: offlineModel,
          input: 'hello',
          tools: [WEATHER_TOOL],
          tool_choice,
        });
        expect(response.status).toBe('requires_action');
        const call = response.output.find((item: any) => item.type === 'function_call');
        expect(call.name).toBe('get_weather');
        expect(validate(JSON.parse(call.arguments))).toBe(true);
        const after = await offline.responses.create({
          model: offlineModel,
          previous_response_id: response.id,
          input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"temp":21}' }],
          tools: [WEATHER_TOOL],
        });
        expect(after.output_text).toBe('The tool get_weather returned: {"temp":21}');
      }
    });

    it('the stream helper accepts reasoning items and their events (offline model, scripted)', async () => {
      const events: any[] = [];
      const stream = offline.responses.stream({ model: offlineModel, input: 'think about it' });
      stream.on('event', (event: any) => events.push(event));
      const final = await stream.finalResponse();
      expect(final.output.map((item: any) => item.type)).toEqual(['reasoning', 'message']);
      expect(final.output[0].content).toEqual([
        { type: 'reasoning_text', text: 'Let me think this through.' },
      ]);
      expect(final.output_text).toBe('Thought it through.');
      expect(final.usage.output_tokens_details.reasoning_tokens).toBe(5);
      expect(events.map((event) => event.type)).toContain('response.reasoning_text.delta');
    });

    it('the stream helper ends on response.incomplete when max_output_tokens cuts the reply', async () => {
      const events: any[] = [];
      const stream = offline.responses.stream({
        model: offlineModel,
        input: 'word '.repeat(30),
        max_output_tokens: 16,
      });
      stream.on('event', (event: any) => events.push(event));
      const helperFinal = await stream.finalResponse();
      expect(events.at(-1).type).toBe('response.incomplete');
      // openai 4.x's helper predates response.incomplete: it returns what it accumulated, so its
      // callers read the event; later majors return the event's Response.
      const final = label === 'openai 4.x' ? events.at(-1).response : helperFinal;
      expect(final.status).toBe('incomplete');
      expect(final.incomplete_details).toEqual({ reason: 'max_output_tokens' });
      expectValidStreamEvents(events.filter((event) => !event.type.startsWith('response.reasoning_text')));

      const short = await offline.responses.create({
        model: offlineModel,
        input: 'one two three four',
        max_output_tokens: 3,
      });
      expect(short).toMatchObject({ status: 'incomplete', output_text: 'You said: one ' });
      expect(short.usage.output_tokens).toBe(3);
    });

    it('store: false leaves nothing to retrieve', async () => {
      const response = await offline.responses.create({
        model: offlineModel,
        input: 'forget me',
        store: false,
      });
      expect(response.store).toBe(false);
      await expect(offline.responses.retrieve(response.id)).rejects.toMatchObject({ status: 404 });
    });
  },
);
