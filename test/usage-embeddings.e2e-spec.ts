import OpenAI, { toFile } from 'openai';
import { OrganizationsService } from '../src/organizations/organizations.service.js';
import { FakeUpstream } from './support/fake-upstream.js';
import { call } from './support/http.js';
import { letterVector } from './support/embeddings-endpoint.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';
import { json, startLocalServer, type LocalServer } from './support/tools-local-servers.js';

describe('embeddings calls in usage (docs/usage.md "Embeddings")', () => {
  let app: TestApp;
  let endpoint: LocalServer;
  let upstream: FakeUpstream;
  /** An organization embedding with the endpoint below, and one with the local embedder. */
  let remote: SeededOrganization;
  let local: SeededOrganization;
  /** The prompt tokens the endpoint reported, all calls together. */
  let reported = 0;
  /** When set, the endpoint answers without `usage` (some servers do). */
  let withoutUsage = false;

  const usage = (adminKey: string, query: string) =>
    call(app.baseUrl, 'GET', `/admin/v1/usage?${query}`, { key: adminKey });
  const sdk = (key: string, headers: Record<string, string> = {}) =>
    new OpenAI({ apiKey: key, baseURL: `${app.baseUrl}/v1`, maxRetries: 0, defaultHeaders: headers });

  beforeAll(async () => {
    endpoint = await startLocalServer((request, res) => {
      const body = JSON.parse(request.body);
      const input: string[] = body.input;
      // A count of its own (characters, not words), so the test tells it from the local count.
      const tokens = input.reduce((sum, text) => sum + text.length, 0);
      reported += withoutUsage ? 0 : tokens;
      json(res, 200, {
        object: 'list',
        model: body.model,
        data: input.map((text, index) => ({ object: 'embedding', index, embedding: letterVector(text, 8) })),
        ...(withoutUsage ? {} : { usage: { prompt_tokens: tokens, total_tokens: tokens } }),
      });
    });
    upstream = await new FakeUpstream().start();
    app = await startTestApp({
      SSRF_ALLOWLIST: '127.0.0.1',
      VECTOR_STORE_INGEST_POLL_MS: '50',
      UPSTREAM_MAX_RETRIES: '0',
    });
    remote = await app.seedOrganization('embed-usage-remote');
    local = await app.seedOrganization('embed-usage-local', {
      provider: 'openai-compatible',
      baseUrl: upstream.url,
      model: 'chat-model',
      functionCalling: true,
    });
    await app.running.app.get(OrganizationsService).upsertBySlug(
      {
        slug: remote.slug,
        embeddings: { baseUrl: `${endpoint.origin}/v1`, model: 'embed-small', dimensions: 8 },
      },
      app.dataSource.manager,
    );
  });
  afterAll(async () => {
    await app?.close();
    await endpoint?.close();
    await upstream?.stop();
  });

  it("counts the endpoint's reported tokens for ingestion and searches, by model, key and user", async () => {
    const adminKey = await app.createKey(remote.id, ['admin']);
    const files = sdk(remote.keys.user);
    const store = await files.vectorStores.create({ name: 'Zoo' });
    const text = Array.from({ length: 3 }, (_, i) => `Part ${i}: zebras ${'graze '.repeat(700)}`).join('\n');
    const file = await files.vectorStores.files.uploadAndPoll(
      store.id,
      await toFile(Buffer.from(text), 'zoo.md'),
      { pollIntervalMs: 50 },
    );
    expect(file.status).toBe('completed');
    const ingested = reported;
    expect(ingested).toBeGreaterThan(0);

    await sdk(remote.keys.user, { 'x-user-id': 'u-7' }).vectorStores.search(store.id, {
      query: 'zebras graze',
    });
    expect(reported).toBe(ingested + 'zebras graze'.length);

    const byModel = await usage(adminKey, 'group_by=model,assistant,key,user');
    expect(byModel.status).toBe(200);
    expect(byModel.body.data).toEqual([
      expect.objectContaining({
        model: 'embeddings:embed-small',
        assistant_id: null,
        key_id: null,
        user_id: null,
        turns: 0,
        input_tokens: ingested,
        output_tokens: 0,
        total_tokens: ingested,
        cost: {},
      }),
      expect.objectContaining({
        model: 'embeddings:embed-small',
        assistant_id: null,
        key_id: expect.any(String),
        user_id: 'u-7',
        turns: 0,
        input_tokens: 'zebras graze'.length,
      }),
    ]);
    expect(byModel.body.total.input_tokens).toBe(reported);
    // The daily rollup (the budget's) holds the same tokens.
    const [{ tokens }] = await app.dataSource.query<{ tokens: number }[]>(
      'SELECT sum(input_tokens)::int AS tokens FROM usage_daily WHERE organization_id = $1',
      [remote.id],
    );
    expect(tokens).toBe(reported);
  });

  it('counts an answer without usage as chunking counts tokens', async () => {
    const adminKey = await app.createKey(remote.id, ['admin']);
    const files = sdk(remote.keys.user);
    const store = await files.vectorStores.create({ name: 'Quiet' });
    const before = (await usage(adminKey, '')).body.total.input_tokens;
    withoutUsage = true;
    try {
      await files.vectorStores.search(store.id, { query: 'three plain words' });
    } finally {
      withoutUsage = false;
    }
    const after = (await usage(adminKey, '')).body.total.input_tokens;
    expect(after - before).toBe(3);
  });

  it("counts the local embedder's tokens, including file_search in a turn under its assistant and user", async () => {
    const adminKey = await app.createKey(local.id, ['admin']);
    const files = sdk(local.keys.user);
    const store = await files.vectorStores.create({ name: 'Handbook' });
    // Eight tokens, one chunk.
    await files.vectorStores.files.uploadAndPoll(
      store.id,
      await toFile(Buffer.from('The office opens at nine and closes late.'), 'handbook.md'),
      { pollIntervalMs: 50 },
    );
    upstream.script(
      {
        toolCalls: [
          { id: 'call_fs', name: 'file_search', arguments: JSON.stringify({ query: 'office hours' }) },
        ],
        finishReason: 'tool_calls',
      },
      { text: 'At nine.' },
    );
    const turn = await sdk(local.keys.assistant, { 'x-user-id': 'u-9' }).responses.create({
      model: `asst_${local.assistantId}`,
      input: 'When does the office open?',
      tools: [{ type: 'file_search', vector_store_ids: [store.id] }],
    });
    expect(turn.output[0]).toMatchObject({ type: 'file_search_call', status: 'completed' });

    const lines = (await usage(adminKey, 'group_by=model,assistant,user')).body.data;
    const embeddings = lines.filter((line: { model: string }) => line.model.startsWith('embeddings:'));
    expect(embeddings).toEqual([
      // Ingestion: no assistant (the nil id sorts first).
      expect.objectContaining({
        model: 'embeddings:local-hash-v1-512',
        assistant_id: null,
        user_id: null,
        turns: 0,
        input_tokens: 8,
      }),
      expect.objectContaining({
        model: 'embeddings:local-hash-v1-512',
        assistant_id: `asst_${local.assistantId}`,
        user_id: 'u-9',
        turns: 0,
        input_tokens: 2,
      }),
    ]);
    // The turn itself is a line of its own, under the chat model.
    expect(lines).toContainEqual(expect.objectContaining({ model: 'chat-model', turns: 1 }));
  });

  it("counts embeddings tokens against the organization's monthly token budget", async () => {
    const budgeted = await app.seedOrganization('embed-usage-budget');
    await app.running.app.get(OrganizationsService).setMonthlyTokenBudget(budgeted.id, 10);
    const files = sdk(budgeted.keys.user);
    const store = await files.vectorStores.create({ name: 'Big' });
    // No turn has run: only the 50 tokens of embeddings can have spent the budget.
    await files.vectorStores.files.uploadAndPoll(
      store.id,
      await toFile(Buffer.from('word '.repeat(50)), 'words.md'),
      { pollIntervalMs: 50 },
    );
    const refused = await call(app.baseUrl, 'POST', '/v1/responses', {
      key: budgeted.keys.assistant,
      body: { model: `asst_${budgeted.assistantId}`, input: 'hi' },
    });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'token_budget_exceeded' });
  });
});
