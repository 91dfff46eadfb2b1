import OpenAI, { toFile } from 'openai';
import { FakeUpstream } from './support/fake-upstream.js';
import { expectValidResponse } from './support/open-responses.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

describe('the file_search tool of Responses', () => {
  let app: TestApp;
  let upstream: FakeUpstream;
  let orgA: SeededOrganization;
  let orgB: SeededOrganization;
  let files: OpenAI;
  let responses: OpenAI;
  let model: string;
  let storeId: string;
  let fileId: string;
  let parkingId: string;
  const callSearch = (query: unknown) => ({
    toolCalls: [{ id: 'call_fs', name: 'file_search', arguments: JSON.stringify({ query }) }],
    finishReason: 'tool_calls',
  });

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    app = await startTestApp({ UPSTREAM_MAX_RETRIES: '0', VECTOR_STORE_INGEST_POLL_MS: '50' });
    const fake = {
      provider: 'openai-compatible',
      baseUrl: upstream.url,
      model: 'fake-model',
      functionCalling: true,
    };
    orgA = await app.seedOrganization('fs-a', fake);
    orgB = await app.seedOrganization('fs-b', fake);
    model = `asst_${orgA.assistantId}`;
    const sdk = (key: string) => new OpenAI({ apiKey: key, baseURL: `${app.baseUrl}/v1`, maxRetries: 0 });
    files = sdk(orgA.keys.user);
    responses = sdk(orgA.keys.assistant);
    const store = await files.vectorStores.create({ name: 'Handbook' });
    storeId = store.id;
    const file = await files.vectorStores.files.uploadAndPoll(
      store.id,
      await toFile(Buffer.from('The office opens at nine and closes at five.'), 'handbook.md'),
      { pollIntervalMs: 50 },
    );
    fileId = file.id;
    await files.vectorStores.files.update(file.id, { vector_store_id: store.id, attributes: { team: 'hr' } });
    const parking = await files.vectorStores.files.uploadAndPoll(
      store.id,
      await toFile(Buffer.from('Parking permits are renewed every January.'), 'parking.md'),
      { pollIntervalMs: 50 },
    );
    parkingId = parking.id;
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.stop();
  });

  it('searches the stores when the model calls it, and shows the call with its results', async () => {
    upstream.script(callSearch('office opening hours'), { text: 'It opens at nine.' });
    const response = await responses.responses.create({
      model,
      input: 'When does the office open?',
      tools: [{ type: 'file_search', vector_store_ids: [storeId], max_num_results: 1 }],
      include: ['file_search_call.results'],
    });
    expect(response.status).toBe('completed');
    expect(response.output[0]).toEqual({
      type: 'file_search_call',
      id: expect.stringMatching(/^fs_/),
      status: 'completed',
      queries: ['office opening hours'],
      results: [
        {
          file_id: fileId,
          filename: 'handbook.md',
          score: expect.any(Number),
          text: 'The office opens at nine and closes at five.',
          attributes: { team: 'hr' },
          vector_store_id: storeId,
        },
      ],
    });
    expect(response.output_text).toBe('It opens at nine.');
    // Echoed whole, defaults filled in (Open Responses' FileSearchTool requires every field).
    expect(response.tools).toEqual([
      {
        type: 'file_search',
        vector_store_ids: [storeId],
        max_num_results: 1,
        ranking_options: {
          ranker: 'auto',
          score_threshold: 0,
          hybrid_search: { embedding_weight: 1, text_weight: 1 },
        },
        filters: null,
      },
    ]);
    expectValidResponse(response);
    // The model was offered the tool, then read the passage.
    const [first, second] = upstream.requests.slice(-2);
    expect(first.body.tools.map((tool: any) => tool.function.name)).toContain('file_search');
    const toolMessage = second.body.messages.find((message: any) => message.role === 'tool');
    expect(JSON.parse(toolMessage.content).results[0]).toMatchObject({
      filename: 'handbook.md',
      text: expect.stringContaining('nine'),
    });
  });

  it('streams the call events, and leaves results out unless included', async () => {
    upstream.script(callSearch('office parking permits'), { text: 'In January.' });
    const stream = await responses.responses.create({
      model,
      input: 'When are parking permits renewed?',
      tools: [
        {
          type: 'file_search',
          vector_store_ids: [storeId],
          filters: { type: 'eq', key: 'team', value: 'hr' },
        },
      ],
      stream: true,
    });
    const types: string[] = [];
    let completed: any;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.completed') completed = event.response;
    }
    const searchEvents = types.filter((type) => type.startsWith('response.file_search_call.'));
    expect(searchEvents).toEqual([
      'response.file_search_call.in_progress',
      'response.file_search_call.searching',
      'response.file_search_call.completed',
    ]);
    expect(completed.output[0]).toMatchObject({
      type: 'file_search_call',
      status: 'completed',
      results: null,
    });
    // The filter kept the parking file (no team attribute) from the model.
    const toolMessage = upstream.requests
      .at(-1)!
      .body.messages.find((message: any) => message.role === 'tool');
    expect(JSON.parse(toolMessage.content).results.map((hit: any) => hit.filename)).toEqual(['handbook.md']);
  });

  it('annotates the answer with file_citation for the searched files it names (JSON) or quotes (streamed)', async () => {
    const named = 'It opens at nine [handbook.md].';
    upstream.script(callSearch('office opening hours'), { text: named });
    const response = await responses.responses.create({
      model,
      input: 'When does the office open?',
      tools: [{ type: 'file_search', vector_store_ids: [storeId] }],
    });
    const message = response.output.find((item) => item.type === 'message');
    expect(message).toMatchObject({
      content: [
        {
          type: 'output_text',
          text: named,
          annotations: [
            { type: 'file_citation', index: named.indexOf(']'), file_id: fileId, filename: 'handbook.md' },
          ],
        },
      ],
    });
    expect((await files.responses.retrieve(response.id)).output).toEqual(response.output);

    const quoted = 'Parking permits are renewed every January, it says.';
    upstream.script(callSearch('parking permits'), { text: quoted });
    const stream = await responses.responses.create({
      model,
      input: 'When are parking permits renewed?',
      tools: [{ type: 'file_search', vector_store_ids: [storeId] }],
      stream: true,
    });
    const added: any[] = [];
    const types: string[] = [];
    let completed: any;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.annotation.added') added.push(event);
      if (event.type === 'response.completed') completed = event.response;
    }
    const citation = {
      type: 'file_citation',
      index: quoted.indexOf('January') + 'January'.length,
      file_id: parkingId,
      filename: 'parking.md',
    };
    const messageIndex = completed.output.findIndex((item: any) => item.type === 'message');
    expect(added).toEqual([
      {
        type: 'response.output_text.annotation.added',
        sequence_number: expect.any(Number),
        item_id: completed.output[messageIndex].id,
        output_index: messageIndex,
        content_index: 0,
        annotation_index: 0,
        annotation: citation,
      },
    ]);
    // Announced after the text, before it is done.
    expect(types.indexOf('response.output_text.annotation.added')).toBe(
      types.indexOf('response.output_text.done') - 1,
    );
    expect(completed.output[messageIndex].content[0].annotations).toEqual([citation]);
  });

  it('marks a failed search failed and still answers', async () => {
    upstream.script(callSearch(''), { text: 'I could not search.' });
    const response = await responses.responses.create({
      model,
      input: 'x',
      tools: [{ type: 'file_search', vector_store_ids: [storeId] }],
    });
    expect(response.status).toBe('completed');
    expect(response.output[0]).toMatchObject({ type: 'file_search_call', status: 'failed' });
    expect(response.output_text).toBe('I could not search.');
  });

  it("refuses another organization's store as not found, and malformed tools by name", async () => {
    const other = new OpenAI({ apiKey: orgB.keys.assistant, baseURL: `${app.baseUrl}/v1`, maxRetries: 0 });
    const before = upstream.requests.length;
    await expect(
      other.responses.create({
        model: `asst_${orgB.assistantId}`,
        input: 'x',
        tools: [{ type: 'file_search', vector_store_ids: [storeId] }],
      }),
    ).rejects.toMatchObject({ status: 404, code: 'vector_store_not_found' });
    await expect(
      responses.responses.create({
        model,
        input: 'x',
        tools: [{ type: 'file_search', vector_store_ids: [] }],
      }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringContaining('tools[0].vector_store_ids') });
    await expect(
      responses.responses.create({
        model,
        input: 'x',
        tools: [{ type: 'file_search', vector_store_ids: [storeId], max_num_results: 99 }],
      }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringContaining('tools[0].max_num_results') });
    expect(upstream.requests.length).toBe(before);
  });
});
