import OpenAI, { toFile } from 'openai';
import { expectValidResponse, expectValidStreamEvents } from './support/open-responses.js';
import { call } from './support/http.js';
import { postStream } from './support/sse.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

type Json = Record<string, any>;

const WEATHER = {
  type: 'function',
  name: 'get_weather',
  description: 'Get the current weather for a location',
  parameters: {
    type: 'object',
    properties: { location: { type: 'string', description: 'The city and state, e.g. San Francisco, CA' } },
    required: ['location'],
  },
};

/** A one-page PDF whose only text is its title line. */
const PDF_TITLE_PAGE =
  'data:application/pdf;base64,JVBERi0xLjEKMSAwIG9iago8PCAvVHlwZSAvQ2F0YWxvZyAvUGFnZXMgMiAwIFIgPj4KZW5kb2JqCjIgMCBvYmoKPDwgL1R5cGUgL1BhZ2VzIC9LaWRzIFszIDAgUl0gL0NvdW50IDEgPj4KZW5kb2JqCjMgMCBvYmoKPDwgL1R5cGUgL1BhZ2UgL1BhcmVudCAyIDAgUiAvTWVkaWFCb3ggWzAgMCAzMDAgMTQ0XSAvQ29udGVudHMgNCAwIFIgL1Jlc291cmNlcyA8PCAvRm9udCA8PCAvRjEgNSAwIFIgPj4gPj4gPj4KZW5kb2JqCjQgMCBvYmoKPDwgL0xlbmd0aCA3NCA+PgpzdHJlYW0KQlQKL0YxIDEyIFRmCjcyIDcyIFRkCihUaXRsZTogT3BlblJlc3BvbnNlcyBGaWxlIElucHV0IEZpeHR1cmUpIFRqCkVUCmVuZHN0cmVhbQplbmRvYmoKNSAwIG9iago8PCAvVHlwZSAvRm9udCAvU3VidHlwZSAvVHlwZTEgL0Jhc2VGb250IC9IZWx2ZXRpY2EgPj4KZW5kb2JqCnRyYWlsZXIKPDwgL1Jvb3QgMSAwIFIgPj4KJSVFT0Y=';

/** A 1×1 PNG. */
const PNG_PIXEL =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/**
 * The Open Responses compliance suite's eleven cases (openresponses.org/compliance, its
 * `compliance-tests.ts`), as it runs them: plain HTTP with a bearer key, each Response (or the
 * stream's final one) checked against the specification's schemas and then by the case's own
 * checks. The two optional cases are enabled: `file-search` with a vector store made here, and
 * `offline-web-search` (`web_search` with `external_web_access: false`, docs/knowledge.md).
 */
describe('the Open Responses compliance suite, optional cases enabled', () => {
  let app: TestApp;
  let org: SeededOrganization;
  let model: string;
  let vectorStoreId: string;

  beforeAll(async () => {
    app = await startTestApp({ VECTOR_STORE_INGEST_POLL_MS: '50' });
    org = await app.seedOrganization('compliance');
    model = `asst_${org.assistantId}`;
    const sdk = new OpenAI({ apiKey: org.keys.user, baseURL: `${app.baseUrl}/v1`, maxRetries: 0 });
    const store = await sdk.vectorStores.create({ name: 'Compliance fixture' });
    await sdk.vectorStores.files.uploadAndPoll(
      store.id,
      await toFile(
        Buffer.from('An example passage: Open Responses is an open specification for LLM interfaces.'),
        'open-responses.md',
      ),
      { pollIntervalMs: 50 },
    );
    vectorStoreId = store.id;
  });
  afterAll(async () => {
    await app?.close();
  });

  const bearer = () => ({ authorization: `Bearer ${org.keys.assistant}` });

  /** One request as the suite sends it; the Response after the schema check. */
  async function create(body: Json): Promise<Json> {
    const reply = await call(app.baseUrl, 'POST', '/v1/responses', {
      headers: bearer(),
      body: { model, ...body, stream: false },
    });
    // A refusal shows its error envelope in the failure, as the suite reports `HTTP 400: …`.
    expect(reply.status === 200 ? 200 : reply.body).toBe(200);
    expectValidResponse(reply.body);
    return reply.body;
  }

  /** A streamed request: every event checked, and the final Response as `create` checks it. */
  async function stream(body: Json): Promise<{ response: Json; events: Json[] }> {
    const reply = await postStream(app.baseUrl, org.keys.assistant, { model, ...body });
    expect(reply.status).toBe(200);
    expectValidStreamEvents(reply.events);
    const events = reply.events.flatMap((event) => (event.json ? [event.json] : []));
    const response = events.at(-1)?.response;
    expectValidResponse(response);
    return { response, events };
  }

  const expectOutput = (response: Json, type?: string) => {
    expect(response.output.length).toBeGreaterThan(0);
    if (type) expect(response.output.map((item: Json) => item.type)).toContain(type);
  };

  it('basic-response', async () => {
    const response = await create({
      input: [{ type: 'message', role: 'user', content: 'Say hello in exactly 3 words.' }],
    });
    expectOutput(response);
    expect(response.status).toBe('completed');
  });

  it('streaming-response', async () => {
    const { response, events } = await stream({
      input: [{ type: 'message', role: 'user', content: 'Count from 1 to 5.' }],
    });
    expect(events.length).toBeGreaterThan(0);
    expect(response.status).toBe('completed');
  });

  it('system-prompt', async () => {
    const response = await create({
      input: [
        { type: 'message', role: 'system', content: 'You are a pirate. Always respond in pirate speak.' },
        { type: 'message', role: 'user', content: 'Say hello.' },
      ],
    });
    expectOutput(response);
    expect(response.status).toBe('completed');
  });

  it('tool-calling', async () => {
    const response = await create({
      input: [{ type: 'message', role: 'user', content: "What's the weather like in San Francisco?" }],
      tools: [WEATHER],
    });
    expectOutput(response, 'function_call');
  });

  it('function-call-roundtrip', async () => {
    const first = await create({
      input: 'Use the weather tool to get the temperature in San Francisco.',
      tools: [WEATHER],
      tool_choice: { type: 'function', name: 'get_weather' },
    });
    const callItem = first.output.find((item: Json) => item.type === 'function_call');
    expect(callItem).toBeDefined();
    const second = await create({
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: callItem.call_id, output: '{"temperature_f":64}' }],
      tools: [WEATHER],
    });
    expectOutput(second);
    expect(second.status).toBe('completed');
  });

  it('image-input', async () => {
    const response = await create({
      input: [
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'What do you see in this image? Answer in one sentence.' },
            { type: 'input_image', image_url: PNG_PIXEL },
          ],
        },
      ],
    });
    expectOutput(response);
    expect(response.status).toBe('completed');
  });

  it('file-input', async () => {
    const response = await create({
      input: [
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'Read the attached file and answer with its title only.' },
            { type: 'input_file', filename: 'fixture.pdf', file_data: PDF_TITLE_PAGE },
          ],
        },
      ],
    });
    expectOutput(response);
    expect(response.status).toBe('completed');
  });

  it('multi-turn', async () => {
    const response = await create({
      input: [
        { type: 'message', role: 'user', content: 'My name is Alice.' },
        { type: 'message', role: 'assistant', content: 'Hello Alice! How can I help you today?' },
        { type: 'message', role: 'user', content: 'What is my name?' },
      ],
    });
    expectOutput(response);
    expect(response.status).toBe('completed');
  });

  it('previous-response-id', async () => {
    const first = await create({ input: 'Remember this code word: papaya. Reply with only OK.' });
    const second = await create({
      previous_response_id: first.id,
      input: 'What code word did I ask you to remember?',
    });
    expectOutput(second);
    expect(second.status).toBe('completed');
  });

  it('file-search (optional): searches the vector store made for it', async () => {
    const response = await create({
      input: 'Search the configured vector store for relevant content and summarize one result.',
      tools: [{ type: 'file_search', vector_store_ids: [vectorStoreId] }],
      tool_choice: { type: 'file_search' },
      include: ['file_search_call.results'],
    });
    expectOutput(response, 'file_search_call');
    const searched = response.output.find((item: Json) => item.type === 'file_search_call');
    expect(searched).toMatchObject({ status: 'completed', queries: [expect.any(String)] });
    expect(searched.results[0]).toMatchObject({
      filename: 'open-responses.md',
      vector_store_id: vectorStoreId,
      text: expect.stringContaining('Open Responses'),
    });
    expect(response.tool_choice).toEqual({ type: 'file_search' });
  });

  it('offline-web-search (optional): web_search without live access, sources included', async () => {
    const response = await create({
      input: 'Find the most relevant cached result for OpenResponses.',
      tools: [{ type: 'web_search', external_web_access: false }],
      tool_choice: { type: 'web_search' },
      include: ['web_search_call.action.sources'],
    });
    expectOutput(response, 'web_search_call');
    const searched = response.output.find((item: Json) => item.type === 'web_search_call');
    // A new organization has searched nothing live yet: its cache is empty, and says so.
    expect(searched).toMatchObject({ status: 'completed', action: { type: 'search', sources: [] } });
    expect(response.tools).toEqual([{ type: 'web_search', external_web_access: false }]);
    expect(response.status).toBe('completed');
  });
});
