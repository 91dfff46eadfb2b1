import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { VectorIndexProbe } from '../src/vector-stores/vector-index/vector-index.probe.js';
import { CapturedLog } from './support/captured-log.js';
import { startTestApp, type TestApp } from './support/test-app.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

/** Migrating an empty database takes seconds on a loaded machine, and each test boots twice or more. */
const SLOW_TEST_MS = 180_000;

const onPostgres = Boolean(process.env.DATABASE_URL);

/** Workers that would tick many times during a boot's migrations if they were running then. */
const EAGER_WORKERS = {
  VECTOR_STORE_INGEST_POLL_MS: '10',
  TURN_SWEEP_MS: '50',
  TURN_LEASE_RENEW_MS: '50',
};

/** An empty database: a new data directory, or a new database on the server of DATABASE_URL. */
async function emptyDatabase(): Promise<TestDatabase> {
  if (onPostgres) return createTestDatabase(); // created empty: the boot migrates it
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-boot-order-'));
  return {
    env: { EMBEDDED_DATA_DIR: join(dir, 'data') },
    drop: () => rm(dir, { recursive: true, force: true }),
  };
}

const sdk = (app: TestApp, key: string) =>
  new OpenAI({ apiKey: key, baseURL: `${app.baseUrl}/v1`, maxRetries: 0 });

/** Uploads a file into the store and waits until its ingestion ended. */
async function ingest(app: TestApp, key: string, storeId: string, text: string) {
  return sdk(app, key).vectorStores.files.uploadAndPoll(
    storeId,
    await toFile(Buffer.from(text), 'notes.md'),
    {
      pollIntervalMs: 50,
    },
  );
}

/** Whether this database offers pgvector: the embedded one does, a PostgreSQL server may not. */
async function pgvectorAvailable(app: TestApp): Promise<boolean> {
  const [row] = await app.dataSource.query<{ available: boolean }[]>(
    "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') AS available",
  );
  return row.available;
}

/** The organization's chunks, and how many of them have their pgvector copy (a column only pgvector adds). */
async function chunkVectors(app: TestApp, organizationId: string, available: boolean) {
  const [row] = await app.dataSource.query<{ total: string; indexed: string }[]>(
    `SELECT count(*) AS total, ${available ? 'count(embedding_vector)' : '0'} AS indexed
       FROM vector_store_chunks WHERE organization_id = $1`,
    [organizationId],
  );
  return { total: Number(row.total), indexed: Number(row.indexed) };
}

describe('the boot: background workers start after the migrations and probes', () => {
  let app: TestApp | undefined;
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await app?.stop().catch(() => undefined);
    app = undefined;
    await database?.drop();
    database = undefined;
  });

  it(
    'migrates an empty database with no worker query failing before the schema exists',
    async () => {
      database = await emptyDatabase();
      const log = new CapturedLog();
      app = await startTestApp(EAGER_WORKERS, { reuse: database, logger: log });
      // The boot itself created the schema, while the workers were already constructed.
      expect(log.lines.map((line) => line.msg)).toContain('applied migrations');

      // The workers run now: a file attached after the boot is ingested.
      const org = await app.seedOrganization('fresh');
      const store = await sdk(app, org.keys.user).vectorStores.create({ name: 'fresh' });
      const file = await ingest(app, org.keys.user, store.id, 'The backup runs every night at two.');
      expect(file.status).toBe('completed');
      // No worker asked for a table before the migrations created it (42P01, "relation does not exist").
      expect(log.problems).toEqual([]);
    },
    SLOW_TEST_MS,
  );

  it(
    'reads the vector search mode after the vector-index migration, even with a file to ingest at boot',
    async () => {
      // A database one release behind: a file left in progress, the vector-index migration not yet run.
      app = await startTestApp({ VECTOR_STORE_INGEST_POLL_MS: '600000' });
      const available = await pgvectorAvailable(app);
      const org = await app.seedOrganization('upgrade');
      const store = await sdk(app, org.keys.user).vectorStores.create({ name: 'upgrade' });
      const queued = await ingest(app, org.keys.user, store.id, 'The invoice is due at the end of March.');
      await app.dataSource.query(
        `UPDATE vector_store_files SET status = 'in_progress', usage_bytes = 0, attempts = 0, lease_until = NULL
          WHERE organization_id = $1`,
        [org.id],
      );
      await app.dataSource.query('DELETE FROM vector_store_chunks WHERE organization_id = $1', [org.id]);
      const migrations = await app.dataSource.query<{ name: string }[]>(
        'SELECT name FROM schema_migrations ORDER BY id DESC',
      );
      for (const { name } of migrations) {
        await app.dataSource.undoLastMigration({ transaction: 'each' });
        if (name.startsWith('VectorIndex')) break;
      }
      database = app.database;
      await app.stop();

      // The upgraded replica: its ingestion worker has that file to take as soon as it runs.
      const log = new CapturedLog();
      app = await startTestApp(EAGER_WORKERS, { reuse: database, logger: log });
      const mode = await app.running.app.get(VectorIndexProbe).detect();
      expect(mode).toBe(available ? 'hnsw' : 'exact-scan');
      const client = sdk(app, org.keys.user);
      const done = await client.vectorStores.files.poll(store.id, queued.id, { pollIntervalMs: 50 });
      expect(done.status).toBe('completed');
      // And a file attached later is stored the same way: the mode was not read before the migration.
      const later = await ingest(app, org.keys.user, store.id, 'The laptop ships on Mondays.');
      expect(later.status).toBe('completed');

      const chunks = await chunkVectors(app, org.id, available);
      expect(chunks.total).toBeGreaterThanOrEqual(2);
      expect(chunks.indexed).toBe(available ? chunks.total : 0);
      expect(log.problems).toEqual([]);
    },
    SLOW_TEST_MS,
  );
});
