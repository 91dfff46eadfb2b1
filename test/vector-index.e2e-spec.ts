import OpenAI, { toFile } from 'openai';
import { embedLocally } from '../src/vector-stores/embeddings/local-embedder.js';
import { ChunkSearchRepository } from '../src/vector-stores/search/chunk-search.repository.js';
import { VectorIndexProbe } from '../src/vector-stores/vector-index/vector-index.probe.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

/** A few hundred chunks of varied sentences: enough for HNSW to have a graph, small enough to upload. */
const TOPICS = [
  'backup',
  'invoice',
  'laptop',
  'holiday',
  'printer',
  'salary',
  'parking',
  'security',
  'training',
  'kitchen',
  'travel',
  'insurance',
];
const VERBS = ['runs', 'renews', 'expires', 'arrives', 'changes', 'stops', 'starts', 'ships'];
const WHEN = ['every night', 'on Mondays', 'in March', 'each quarter', 'after lunch', 'at noon', 'yearly'];

function corpus(): string {
  const paragraphs: string[] = [];
  for (let i = 0; i < 400; i++) {
    const topic = TOPICS[i % TOPICS.length];
    const other = TOPICS[(i * 7 + 3) % TOPICS.length];
    paragraphs.push(
      `Note ${i}: the ${topic} ${VERBS[i % VERBS.length]} ${WHEN[i % WHEN.length]}, ` +
        `unless the ${other} team ${VERBS[(i * 3) % VERBS.length]} it first (case ${i * 13}).`,
    );
  }
  return paragraphs.join('\n\n');
}

const QUERIES = [
  'when does the backup run',
  'invoice expires in March',
  'laptop ships',
  'who stops the printer',
  'salary after lunch',
  'travel insurance yearly',
  'case 1300',
];

/**
 * The HNSW path ranks like the exact scan: on a small set its approximate search finds every
 * neighbour, so both answer the same chunks in the same order (ties of equal score aside: two
 * chunks whose dot products differ by less than float rounding may swap).
 */
describe('vector index (pgvector HNSW where available, exact scan otherwise)', () => {
  let app: TestApp;
  let org: SeededOrganization;
  let storeId: string;
  let available: boolean;

  beforeAll(async () => {
    app = await startTestApp({ VECTOR_STORE_INGEST_POLL_MS: '50' });
    org = await app.seedOrganization('vector-index');
    const [row] = await app.dataSource.query<{ available: boolean }[]>(
      "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') AS available",
    );
    available = row.available;
    // Retries: on the embedded database, requests concurrent with ingestion can fail with a 503
    // (seen before ingestion stopped opening a second connection inside its transaction); that is
    // not what this suite is about.
    const client = new OpenAI({ apiKey: org.keys.user, baseURL: `${app.baseUrl}/v1` });
    const store = await client.vectorStores.create({ name: 'Notes' });
    storeId = store.id.replace(/^vs_/, '');
    const upload = await client.files.create({
      file: await toFile(Buffer.from(corpus()), 'notes.md'),
      purpose: 'assistants',
    });
    const file = await client.vectorStores.files.createAndPoll(
      store.id,
      {
        file_id: upload.id,
        chunking_strategy: {
          type: 'static',
          static: { max_chunk_size_tokens: 100, chunk_overlap_tokens: 0 },
        },
      },
      { pollIntervalMs: 250 },
    );
    expect(file.status).toBe('completed');
  });
  afterAll(async () => {
    await app?.close();
  });

  it('uses the HNSW index exactly when the database offers pgvector', async () => {
    const mode = await app.running.app.get(VectorIndexProbe).detect();
    // The embedded database always loads PGlite's pgvector; a PostgreSQL server may lack it.
    expect(mode).toBe(available ? 'hnsw' : 'exact-scan');
    const [column] = await app.dataSource.query<{ count: string }[]>(
      `SELECT count(*) FROM information_schema.columns
        WHERE table_name = 'vector_store_chunks' AND column_name = 'embedding_vector'`,
    );
    expect(Number(column.count)).toBe(available ? 1 : 0);
    if (available) {
      const [chunks] = await app.dataSource.query<{ total: string; indexed: string }[]>(
        'SELECT count(*) AS total, count(embedding_vector) AS indexed FROM vector_store_chunks',
      );
      expect(Number(chunks.total)).toBeGreaterThan(50);
      expect(chunks.indexed).toBe(chunks.total);
    }
  });

  it('ranks the same chunks in the same order as the exact scan', async () => {
    if (!available) return; // nothing to compare: the exact scan is the only path (see the next test)
    const repository = app.running.app.get(ChunkSearchRepository);
    const rows = await app.dataSource.query<{ id: string; embedding: Buffer }[]>(
      'SELECT id, embedding FROM vector_store_chunks',
    );
    const vectors = new Map(
      rows.map((row) => [row.id, new Float32Array(new Uint8Array(row.embedding).buffer)] as const),
    );
    const score = (id: string, query: Float32Array) =>
      vectors.get(id)!.reduce((sum, value, i) => sum + value * query[i], 0);
    // On this small set the planner would rather sort the store's chunks (exact): without sorts
    // and sequential scans, only the HNSW graph gives the order. The embedded database's connections share one session, so this
    // reaches the repository's queries; a PostgreSQL server's other connections keep their plans.
    await app.dataSource.query('SET enable_seqscan = off; SET enable_sort = off');
    const hnswScans = async () => {
      // The session's pending statistics are flushed when the forcing statement's transaction
      // ends; only a later transaction reads them.
      await app.dataSource.query('SELECT pg_stat_force_next_flush()');
      const [row] = await app.dataSource.query<{ scans: string }[]>(
        `SELECT idx_scan AS scans FROM pg_stat_user_indexes
          WHERE indexrelname = 'IDX_vector_store_chunks_hnsw_512'`,
      );
      return Number(row.scans);
    };
    const before = await hnswScans();
    try {
      for (const text of QUERIES) {
        const query = embedLocally(text);
        for (const limit of [5, 100]) {
          const exact = await repository.nearestExact({
            organizationId: org.id,
            storeIds: [storeId],
            filter: null,
            query,
            limit,
          });
          const indexed = await repository.nearestIndexed({
            organizationId: org.id,
            storeIds: [storeId],
            filter: null,
            query,
            limit,
          });
          expect(indexed.length).toBe(exact.length);
          expect(exact.length).toBeGreaterThan(0);
          indexed.forEach((id, i) => {
            if (id !== exact[i])
              expect(Math.abs(score(id, query) - score(exact[i], query))).toBeLessThan(1e-5);
          });
        }
      }
    } finally {
      await app.dataSource.query('RESET enable_seqscan; RESET enable_sort');
    }
    if (app.config.database.url === undefined) expect(await hnswScans()).toBeGreaterThan(before);
  });

  it('answers searches through the API in either mode, and never across organizations', async () => {
    const client = new OpenAI({ apiKey: org.keys.user, baseURL: `${app.baseUrl}/v1` });
    const page = await client.vectorStores.search(`vs_${storeId}`, {
      query: 'when does the backup run every night',
      max_num_results: 5,
      ranking_options: { hybrid_search: { embedding_weight: 1, text_weight: 0 } } as never,
    });
    expect(page.data.length).toBe(5);
    expect(page.data[0].content[0].text).toMatch(/backup/);
    const other = await app.seedOrganization('vector-index-other');
    const repository = app.running.app.get(ChunkSearchRepository);
    expect(await repository.nearest(other.id, [storeId], null, embedLocally('backup'), 10)).toEqual([]);
  });
});
