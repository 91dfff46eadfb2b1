import OpenAI, { toFile } from 'openai';
import { docxOf, pdfOf } from './support/documents.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

describe('Vector Stores API', () => {
  let app: TestApp;
  let orgA: SeededOrganization;
  let orgB: SeededOrganization;
  let client: OpenAI;
  let other: OpenAI;
  const sdk = (key: string) => new OpenAI({ apiKey: key, baseURL: `${app.baseUrl}/v1`, maxRetries: 0 });
  const upload = async (sdkClient: OpenAI, name: string, content: Buffer | string) =>
    sdkClient.files.create({ file: await toFile(Buffer.from(content), name), purpose: 'assistants' });

  beforeAll(async () => {
    app = await startTestApp({ VECTOR_STORE_INGEST_POLL_MS: '50', QUOTA_FILES_PER_VECTOR_STORE: '5' });
    orgA = await app.seedOrganization('vs-a');
    orgB = await app.seedOrganization('vs-b');
    client = sdk(orgA.keys.user);
    other = sdk(orgB.keys.user);
  });
  afterAll(async () => {
    await app?.close();
  });

  it('creates, lists, retrieves, modifies and deletes a store in OpenAI shapes', async () => {
    const store = await client.vectorStores.create({
      name: 'Handbook',
      metadata: { team: 'hr' },
      expires_after: { anchor: 'last_active_at', days: 7 },
    });
    expect(store).toEqual({
      id: expect.stringMatching(/^vs_[0-9a-f-]{36}$/),
      object: 'vector_store',
      created_at: expect.any(Number),
      name: 'Handbook',
      usage_bytes: 0,
      file_counts: { in_progress: 0, completed: 0, failed: 0, cancelled: 0, total: 0 },
      status: 'completed',
      expires_after: { anchor: 'last_active_at', days: 7 },
      expires_at: store.last_active_at! + 7 * 86400,
      last_active_at: expect.any(Number),
      metadata: { team: 'hr' },
    });
    expect(await client.vectorStores.retrieve(store.id)).toEqual(store);
    const updated = await client.vectorStores.update(store.id, { name: 'Renamed', expires_after: null });
    expect(updated).toMatchObject({ name: 'Renamed', expires_at: null, metadata: { team: 'hr' } });
    expect(updated.expires_after).toBeUndefined();
    const listed = [];
    for await (const item of client.vectorStores.list({ limit: 1 })) listed.push(item.id);
    expect(listed).toContain(store.id);
    expect(await client.vectorStores.delete(store.id)).toEqual({
      id: store.id,
      object: 'vector_store.deleted',
      deleted: true,
    });
    await expect(client.vectorStores.retrieve(store.id)).rejects.toMatchObject({ status: 404 });
  });

  it('ingests text, PDF and DOCX files in the background and searches them', async () => {
    const store = await client.vectorStores.create({ name: 'Docs' });
    const handbook = await client.vectorStores.files.uploadAndPoll(
      store.id,
      await toFile(
        Buffer.from('The office opens at nine. Visitors sign in at the front desk.'),
        'handbook.md',
      ),
      { pollIntervalMs: 50 },
    );
    expect(handbook).toMatchObject({
      object: 'vector_store.file',
      status: 'completed',
      last_error: null,
      vector_store_id: store.id,
      chunking_strategy: {
        type: 'static',
        static: { max_chunk_size_tokens: 800, chunk_overlap_tokens: 400 },
      },
    });
    expect(handbook.usage_bytes).toBeGreaterThan(0);
    const pdf = await upload(client, 'parking.pdf', pdfOf(['Parking permits are renewed every January.']));
    const docx = await upload(client, 'expenses.docx', docxOf(['Expense reports are due on the fifth.']));
    const attached = await client.vectorStores.files.createAndPoll(
      store.id,
      { file_id: pdf.id, attributes: { year: 2024, team: 'facilities' } },
      { pollIntervalMs: 50 },
    );
    expect(attached).toMatchObject({ status: 'completed', attributes: { year: 2024, team: 'facilities' } });
    await client.vectorStores.files.createAndPoll(
      store.id,
      { file_id: docx.id, attributes: { year: 2025 } },
      { pollIntervalMs: 50 },
    );

    const page = await client.vectorStores.search(store.id, { query: 'When are parking permits renewed?' });
    expect(page.data[0]).toEqual({
      file_id: pdf.id,
      filename: 'parking.pdf',
      score: expect.any(Number),
      attributes: { year: 2024, team: 'facilities' },
      content: [{ type: 'text', text: 'Parking permits are renewed every January.' }],
    });
    expect(page.data[0].score).toBeGreaterThan(0);
    expect(page.data[0].score).toBeLessThanOrEqual(1);

    const filtered = await client.vectorStores.search(store.id, {
      query: 'parking permits expense reports',
      filters: {
        type: 'and',
        filters: [
          { type: 'gte', key: 'year', value: 2025 },
          { type: 'nin', key: 'team', value: ['x'] },
        ],
      },
    });
    expect(filtered.data.map((hit) => hit.filename)).toEqual(['expenses.docx']);
    const one = await client.vectorStores.search(store.id, {
      query: 'office parking expenses',
      max_num_results: 1,
    });
    expect(one.data).toHaveLength(1);

    const retrieved = await client.vectorStores.retrieve(store.id);
    expect(retrieved.file_counts).toEqual({
      in_progress: 0,
      completed: 3,
      failed: 0,
      cancelled: 0,
      total: 3,
    });
    expect(retrieved.usage_bytes).toBeGreaterThan(0);

    await client.vectorStores.files.update(pdf.id, { vector_store_id: store.id, attributes: { year: 2030 } });
    const after = await client.vectorStores.search(store.id, {
      query: 'parking',
      filters: { type: 'eq', key: 'year', value: 2030 },
    });
    expect(after.data.map((hit) => hit.file_id)).toEqual([pdf.id]);
    const files = [];
    for await (const file of client.vectorStores.files.list(store.id, { limit: 2 })) files.push(file.id);
    expect(files.sort()).toEqual([handbook.id, pdf.id, docx.id].sort());
    expect(await client.vectorStores.files.delete(pdf.id, { vector_store_id: store.id })).toMatchObject({
      deleted: true,
    });
    const gone = await client.vectorStores.search(store.id, { query: 'parking permits' });
    expect(gone.data.map((hit) => hit.file_id)).not.toContain(pdf.id);
  });

  it('marks a file without text failed, and ingests batches', async () => {
    const store = await client.vectorStores.create({ name: 'Batch' });
    const image = await upload(client, 'photo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]));
    const failed = await client.vectorStores.files.createAndPoll(
      store.id,
      { file_id: image.id },
      { pollIntervalMs: 50 },
    );
    expect(failed.status).toBe('failed');
    expect(failed.last_error).toEqual({ code: 'unsupported_file', message: expect.any(String) });

    const a = await upload(client, 'a.txt', 'alpha bravo');
    const b = await upload(client, 'b.txt', 'charlie delta');
    const batch = await client.vectorStores.fileBatches.createAndPoll(
      store.id,
      {
        files: [
          { file_id: a.id, attributes: { n: 1 } },
          {
            file_id: b.id,
            chunking_strategy: {
              type: 'static',
              static: { max_chunk_size_tokens: 100, chunk_overlap_tokens: 50 },
            },
          },
        ],
      },
      { pollIntervalMs: 50 },
    );
    expect(batch).toMatchObject({
      id: expect.stringMatching(/^vsfb_/),
      object: 'vector_store.files_batch',
      status: 'completed',
      file_counts: { in_progress: 0, completed: 2, failed: 0, cancelled: 0, total: 2 },
    });
    const inBatch = [];
    for await (const file of client.vectorStores.fileBatches.listFiles(batch.id, {
      vector_store_id: store.id,
    }))
      inBatch.push(file);
    expect(inBatch.map((file) => file.id).sort()).toEqual([a.id, b.id].sort());
    expect(inBatch.find((file) => file.id === b.id)?.chunking_strategy).toEqual({
      type: 'static',
      static: { max_chunk_size_tokens: 100, chunk_overlap_tokens: 50 },
    });
  });

  it('refuses malformed requests by name', async () => {
    const store = await client.vectorStores.create({});
    const file = await upload(client, 'x.txt', 'x');
    const refusals: Array<[() => Promise<unknown>, RegExp]> = [
      [() => client.vectorStores.create({ bogus: 1 } as never), /Unknown parameter: bogus/],
      [
        () => client.vectorStores.create({ expires_after: { anchor: 'last_active_at', days: 0 } }),
        /expires_after.days/,
      ],
      [
        () =>
          client.vectorStores.files.create(store.id, {
            file_id: file.id,
            chunking_strategy: {
              type: 'static',
              static: { max_chunk_size_tokens: 100, chunk_overlap_tokens: 51 },
            },
          }),
        /chunk_overlap_tokens/,
      ],
      [
        () =>
          client.vectorStores.files.create(store.id, {
            file_id: file.id,
            attributes: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, i])),
          }),
        /at most 16 keys/,
      ],
      [() => client.vectorStores.search(store.id, { query: 'x', max_num_results: 51 }), /max_num_results/],
      [
        () =>
          client.vectorStores.search(store.id, {
            query: 'x',
            filters: { type: 'like', key: 'a', value: 'b' } as never,
          }),
        /filters.type/,
      ],
    ];
    for (const [request, message] of refusals) {
      await expect(request()).rejects.toMatchObject({ status: 400, message: expect.stringMatching(message) });
    }
  });

  it("keeps every store, file and chunk from another organization's reach", async () => {
    const store = await client.vectorStores.create({ name: 'Secret' });
    const file = await client.vectorStores.files.uploadAndPoll(
      store.id,
      await toFile(Buffer.from('the launch code is 4711'), 's.txt'),
      {
        pollIntervalMs: 50,
      },
    );
    const notFound = { status: 404 };
    await expect(other.vectorStores.retrieve(store.id)).rejects.toMatchObject(notFound);
    await expect(other.vectorStores.update(store.id, { name: 'x' })).rejects.toMatchObject(notFound);
    await expect(other.vectorStores.search(store.id, { query: 'launch code' })).rejects.toMatchObject(
      notFound,
    );
    await expect(
      other.vectorStores.files.retrieve(file.id, { vector_store_id: store.id }),
    ).rejects.toMatchObject(notFound);
    await expect(
      other.vectorStores.files.delete(file.id, { vector_store_id: store.id }),
    ).rejects.toMatchObject(notFound);
    await expect(other.vectorStores.delete(store.id)).rejects.toMatchObject(notFound);
    const mine: string[] = [];
    for await (const s of other.vectorStores.list()) mine.push(s.id);
    expect(mine).not.toContain(store.id);
    // Their own store cannot take our file, and their search never finds our chunks.
    const theirs = await other.vectorStores.create({ name: 'Theirs' });
    await expect(other.vectorStores.files.create(theirs.id, { file_id: file.id })).rejects.toMatchObject(
      notFound,
    );
    await other.vectorStores.files.uploadAndPoll(
      theirs.id,
      await toFile(Buffer.from('nothing here'), 'n.txt'),
      { pollIntervalMs: 50 },
    );
    const found = await other.vectorStores.search(theirs.id, { query: 'launch code 4711' });
    expect(found.data.map((hit) => hit.file_id)).not.toContain(file.id);
    // And ours is intact.
    expect((await client.vectorStores.search(store.id, { query: 'launch code' })).data[0].file_id).toBe(
      file.id,
    );
  });
});
