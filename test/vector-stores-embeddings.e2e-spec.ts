import OpenAI, { toFile } from 'openai';
import { OrganizationsService } from '../src/organizations/organizations.service.js';
import type { EmbeddingsSettings } from '../src/organizations/embeddings-settings.js';
import { letterVector } from './support/embeddings-endpoint.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';
import { json, startLocalServer, type LocalServer } from './support/tools-local-servers.js';

describe("vector stores embedded by the organization's OpenAI-compatible endpoint", () => {
  let app: TestApp;
  let endpoint: LocalServer;
  let org: SeededOrganization;
  let sdk: OpenAI;
  let throttleNext = true;

  const setEmbeddings = (embeddings: EmbeddingsSettings | null) =>
    app.running.app
      .get(OrganizationsService)
      .upsertBySlug({ slug: org.slug, embeddings }, app.dataSource.manager);
  const embeddingCalls = () =>
    endpoint.requests.filter((request) => request.url === '/v1/embeddings' && request.method === 'POST');

  beforeAll(async () => {
    // The OpenAI embeddings protocol: POST /v1/embeddings {model, input[], dimensions, encoding_format}.
    endpoint = await startLocalServer((request, res) => {
      if (request.headers.authorization !== 'Bearer sk-embed-test') return json(res, 401, { error: {} });
      if (throttleNext) {
        throttleNext = false;
        res.setHeader('retry-after-ms', '10');
        return json(res, 429, { error: { message: 'slow down', type: 'rate_limit' } });
      }
      const body = JSON.parse(request.body);
      const input: string[] = body.input;
      json(res, 200, {
        object: 'list',
        model: body.model,
        data: input.map((text, index) => ({
          object: 'embedding',
          index,
          embedding: letterVector(text, body.dimensions),
        })),
        usage: { prompt_tokens: input.length * 3, total_tokens: input.length * 3 },
      });
    });
    app = await startTestApp({
      SSRF_ALLOWLIST: '127.0.0.1',
      EMBED_TEST_KEY: 'sk-embed-test',
      VECTOR_STORE_INGEST_POLL_MS: '50',
    });
    org = await app.seedOrganization('embed-remote');
    sdk = new OpenAI({ apiKey: org.keys.user, baseURL: `${app.baseUrl}/v1`, maxRetries: 0 });
    await setEmbeddings({
      baseUrl: `${endpoint.origin}/v1`,
      model: 'test-embed-small',
      dimensions: 16,
      apiKeyEnv: 'EMBED_TEST_KEY',
      batchSize: 2,
    });
  });
  afterAll(async () => {
    await app?.close();
    await endpoint?.close();
  });

  it('embeds ingestion and queries with the endpoint, in batches, retrying a 429', async () => {
    const store = await sdk.vectorStores.create({ name: 'Remote' });
    const text = Array.from(
      { length: 5 },
      (_, i) => `Paragraph ${i} about zebras and ${'word '.repeat(780)}`,
    );
    const file = await sdk.vectorStores.files.uploadAndPoll(
      store.id,
      await toFile(Buffer.from(text.join('\n\n')), 'zebras.md'),
      { pollIntervalMs: 50 },
    );
    expect(file.status).toBe('completed');
    const calls = embeddingCalls().map((request) => JSON.parse(request.body));
    // The first call was throttled and retried by the SDK; every call has at most batchSize texts.
    expect(calls.length).toBeGreaterThanOrEqual(3);
    for (const call of calls) {
      expect(call).toMatchObject({ model: 'test-embed-small', dimensions: 16, encoding_format: 'float' });
      expect(call.input.length).toBeLessThanOrEqual(2);
    }
    const before = embeddingCalls().length;
    const page = await sdk.vectorStores.search(store.id, { query: 'zebras' });
    expect(page.data[0]).toMatchObject({ filename: 'zebras.md' });
    expect(embeddingCalls().length).toBe(before + 1);
    expect(JSON.parse(embeddingCalls().at(-1)!.body).input).toEqual(['zebras']);
  });

  it('never mixes vector spaces: a store made before a change of embedder searches by words and takes no new files', async () => {
    const old = await sdk.vectorStores.create({ name: 'Before the change' });
    await sdk.vectorStores.files.uploadAndPoll(
      old.id,
      await toFile(Buffer.from('Giraffes eat leaves.'), 'g.md'),
      {
        pollIntervalMs: 50,
      },
    );
    await setEmbeddings({
      baseUrl: `${endpoint.origin}/v1`,
      model: 'test-embed-large',
      dimensions: 8,
      apiKeyEnv: 'EMBED_TEST_KEY',
    });
    const before = embeddingCalls().length;
    const page = await sdk.vectorStores.search(old.id, { query: 'giraffes' });
    expect(page.data.map((result) => result.filename)).toEqual(['g.md']);
    expect(embeddingCalls().length).toBe(before);
    const refused = await sdk.vectorStores.files.uploadAndPoll(
      old.id,
      await toFile(Buffer.from('Elephants are large.'), 'e.md'),
      { pollIntervalMs: 50 },
    );
    expect(refused.status).toBe('failed');
    expect(refused.last_error?.message).toMatch(/no longer the organization's embedder/);
    // A new store takes the new embedder.
    const fresh = await sdk.vectorStores.create({ name: 'After the change' });
    await sdk.vectorStores.files.uploadAndPoll(
      fresh.id,
      await toFile(Buffer.from('Elephants are large.'), 'e.md'),
      {
        pollIntervalMs: 50,
      },
    );
    expect(JSON.parse(embeddingCalls().at(-1)!.body)).toMatchObject({
      model: 'test-embed-large',
      dimensions: 8,
    });
  });

  it('refuses settings naming a service variable or a bad field, by name', async () => {
    await expect(
      setEmbeddings({ baseUrl: `${endpoint.origin}/v1`, model: 'm', apiKeyEnv: 'DATABASE_URL' }),
    ).rejects.toThrow(/embeddings.apiKeyEnv: "DATABASE_URL" is one of the service's own variables/);
    await expect(setEmbeddings({ baseUrl: 'ftp://x', model: 'm' })).rejects.toThrow(/embeddings.baseUrl/);
    await expect(
      setEmbeddings({ baseUrl: `${endpoint.origin}/v1`, model: 'm', dimensions: 0 }),
    ).rejects.toThrow(/embeddings.dimensions/);
  });
});
