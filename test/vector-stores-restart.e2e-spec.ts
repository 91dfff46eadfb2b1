import OpenAI, { toFile } from 'openai';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../src/database/data-source-options.js';
import { SchemaReadiness } from '../src/database/schema-readiness.js';
import { ENTITIES } from '../src/entities.js';
import { embedLocally } from '../src/vector-stores/embeddings/local-embedder.js';
import { IngestionRepository } from '../src/vector-stores/ingestion/ingestion.repository.js';
import { VectorIndexProbe } from '../src/vector-stores/vector-index/vector-index.probe.js';
import { startTestApp, type TestApp } from './support/test-app.js';

const TEXT = 'The backup runs every night at two.';

const sdk = (app: TestApp, key: string) =>
  new OpenAI({ apiKey: key, baseURL: `${app.baseUrl}/v1`, maxRetries: 0 });

/** An organization with a vector store and one file in it, ingested. */
async function ingestedFile(app: TestApp, slug: string) {
  const org = await app.seedOrganization(slug);
  const store = await sdk(app, org.keys.user).vectorStores.create({ name: slug });
  const file = await sdk(app, org.keys.user).vectorStores.files.uploadAndPoll(
    store.id,
    await toFile(Buffer.from(TEXT), 'backup.md'),
    { pollIntervalMs: 50 },
  );
  return { org, store, file };
}

/** As a replica that claimed the file and died leaves it: in progress, no chunks, leased. */
async function leaveAsDeadReplica(app: TestApp, organizationId: string, leaseSql: string): Promise<void> {
  await app.dataSource.query(
    `UPDATE vector_store_files SET status = 'in_progress', usage_bytes = 0, attempts = 1, lease_until = ${leaseSql}
      WHERE organization_id = $1`,
    [organizationId],
  );
  await app.dataSource.query('DELETE FROM vector_store_chunks WHERE organization_id = $1', [organizationId]);
}

describe('vector store ingestion across a restart', () => {
  let first: TestApp | undefined;
  let second: TestApp | undefined;
  afterAll(async () => {
    await first?.stop().catch(() => undefined);
    await second?.close();
  });

  it("finishes a file whose replica died mid-ingestion once that replica's lease runs out", async () => {
    // The first replica ingests only when woken by an attach: it never polls during the test.
    first = await startTestApp({ VECTOR_STORE_INGEST_POLL_MS: '600000' });
    const { org, store, file } = await ingestedFile(first, 'restart');
    await leaveAsDeadReplica(first, org.id, "now() + interval '1 second'");
    const database = first.database;
    await first.stop();
    first = undefined;

    // Its ingestion takes the file as soon as it starts, once the boot has migrated and probed.
    second = await startTestApp({ VECTOR_STORE_INGEST_POLL_MS: '100' }, { reuse: database });
    const client = sdk(second, org.keys.user);
    const done = await client.vectorStores.files.poll(store.id, file.id, { pollIntervalMs: 100 });
    expect(done.status).toBe('completed');
    const page = await client.vectorStores.search(store.id, { query: 'when does the backup run' });
    expect(page.data[0]?.file_id).toBe(file.id);
  });
});

describe('vector store ingestion on a replica that has not read the vector search mode yet', () => {
  let app: TestApp | undefined;
  let single: DataSource | undefined;
  afterAll(async () => {
    await single?.destroy();
    await app?.close();
  });

  it('completes a claimed file on a replica that has not read the vector search mode yet, with one connection', async () => {
    app = await startTestApp({ VECTOR_STORE_INGEST_POLL_MS: '600000' });
    const { org, store, file } = await ingestedFile(app, 'restart-probe');
    await leaveAsDeadReplica(app, org.id, 'NULL');
    // A replica's ingestion with a probe that has not asked the database yet, on a pool of one
    // connection: a statement on another connection while its transaction is open would wait
    // for that transaction (as on the embedded database, whose connections share one session),
    // which would wait for it.
    const { url, embedded } = app.running.database;
    single = new DataSource(dataSourceOptions(url, 1, embedded, ENTITIES));
    await single.initialize();
    const probe = new VectorIndexProbe(single, app.running.app.get(SchemaReadiness));
    const ingestion = new IngestionRepository(single, probe);
    const job = await ingestion.claim(60_000);
    expect(job?.organizationId).toBe(org.id);
    expect(await ingestion.complete(job!, [{ text: TEXT, embedding: embedLocally(TEXT) }])).toBe(true);

    const client = sdk(app, org.keys.user);
    expect((await client.vectorStores.files.retrieve(file.id, { vector_store_id: store.id })).status).toBe(
      'completed',
    );
    const page = await client.vectorStores.search(store.id, { query: 'when does the backup run' });
    expect(page.data[0]?.file_id).toBe(file.id);
  });
});
