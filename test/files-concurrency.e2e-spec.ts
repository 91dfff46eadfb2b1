import OpenAI, { toFile } from 'openai';
import { startTestApp, type TestApp } from './support/test-app.js';

/**
 * A dozen uploads at once, as a client syncing a folder sends them. On the embedded database
 * (one PGlite session shared by the pool's connections) these used to hang: another
 * connection's statements fell between the messages of an upload's extended-query sequence.
 * Runs on whichever database the suite runs on (DATABASE_URL).
 */
const COUNT = 12;

describe('concurrent uploads', () => {
  let app: TestApp;
  let client: OpenAI;

  beforeAll(async () => {
    app = await startTestApp({ VECTOR_STORE_INGEST_POLL_MS: '50' });
    const org = await app.seedOrganization('uploads');
    client = new OpenAI({ apiKey: org.keys.user, baseURL: `${app.baseUrl}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await app?.close();
  });

  const document = (i: number) => `Document ${i}: the access code of room ${i} is ${1000 + i}.\n`.repeat(20);

  it('stores every one of a dozen files uploaded at once', async () => {
    const uploaded = await Promise.all(
      Array.from({ length: COUNT }, async (_, i) =>
        client.files.create({
          file: await toFile(Buffer.from(document(i)), `room-${i}.md`),
          purpose: 'assistants',
        }),
      ),
    );
    expect(new Set(uploaded.map((file) => file.id)).size).toBe(COUNT);
    const listed = await client.files.list({ limit: 100 });
    expect(listed.data.map((file) => file.id).sort()).toEqual(uploaded.map((file) => file.id).sort());
    const contents = await Promise.all(
      uploaded.map(async (file) => (await client.files.content(file.id)).text()),
    );
    expect(contents).toEqual(uploaded.map((file) => document(Number(/room-(\d+)/.exec(file.filename)![1]))));
  });

  it('ingests every one of a dozen files uploaded into a vector store at once', async () => {
    const store = await client.vectorStores.create({ name: 'Rooms' });
    const attached = await Promise.all(
      Array.from({ length: COUNT }, async (_, i) =>
        client.vectorStores.files.uploadAndPoll(
          store.id,
          await toFile(Buffer.from(document(i)), `door-${i}.md`),
          {
            pollIntervalMs: 50,
          },
        ),
      ),
    );
    expect(attached.map((file) => file.status)).toEqual(Array(COUNT).fill('completed'));
    const retrieved = await client.vectorStores.retrieve(store.id);
    expect(retrieved.file_counts).toMatchObject({
      completed: COUNT,
      in_progress: 0,
      failed: 0,
      total: COUNT,
    });
    expect(retrieved.status).toBe('completed');
  });
});
