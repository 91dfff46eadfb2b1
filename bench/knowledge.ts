import { mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ApiKeysService } from '../src/api-keys/api-keys.service.js';
import { createApp } from '../src/bootstrap/create-app.js';
import { loadConfig } from '../src/config/app-config.js';
import { OrganizationsService } from '../src/organizations/organizations.service.js';
import { IngestionRepository } from '../src/vector-stores/ingestion/ingestion.repository.js';
import { embedLocally } from '../src/vector-stores/embeddings/local-embedder.js';
import { ChunkSearchRepository } from '../src/vector-stores/search/chunk-search.repository.js';
import { VectorIndexProbe } from '../src/vector-stores/vector-index/vector-index.probe.js';
import { createBenchDatabase } from './environment.js';
import { percentile } from './stats.js';

/**
 * `npm run bench:knowledge`: ingestion throughput and search latency of vector stores at 10k
 * and 100k chunks, on the embedded database (no DATABASE_URL) or on PostgreSQL (DATABASE_URL,
 * a scratch database created and dropped). Not part of `npm run bench`: it takes minutes.
 *
 * The service runs in this process (createApp, the built sources). Ingestion is measured
 * through the API: files uploaded, attached as one batch (static chunking, 200 tokens, no
 * overlap), timed from the attach to every file `completed`. The 10k and 100k corpora are then
 * topped up directly in SQL (chunks embedded by the local embedder here, inserted 500 a
 * statement into the same tables as ingestion, into a file of the store), because ingesting
 * 100k chunks through the API would take most of an hour on the embedded database; the
 * HNSW indexes are dropped for the top-up and built again after it (timed apart, as
 * `vectorIndexBuild`), since an insert into the graph one chunk at a time is what made
 * seeding slow (7 chunks/s on the embedded database). Search is
 * timed through the API (`POST /v1/vector_stores/{id}/search`, hybrid, 10 results), one
 * request at a time; the vector ranking alone is also timed by each path the database offers.
 */
/** A deterministic pseudo-random generator (mulberry32), so every run has the same corpus. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A vocabulary of 20,000 made-up words drawn with Zipf's law (the r-th most frequent word has
 * weight 1/r), as words are in real text: a query's rarer words match few chunks, as they would.
 */
const SYLLABLES =
  'ka lo mi re su ta ne vi do pa ri zu be fo ga hu ji ke ly mo nu or pe qu sa ti ul ve wo xe'.split(' ');
const VOCABULARY = Array.from({ length: 20_000 }, (_, r) => {
  let word = '';
  for (let n = r + 1; n > 0; n = Math.floor(n / SYLLABLES.length)) word += SYLLABLES[n % SYLLABLES.length];
  return word.length < 4 ? `${word}ra` : word;
});
const CUMULATIVE = (() => {
  let sum = 0;
  return VOCABULARY.map((_, r) => (sum += 1 / (r + 1)));
})();

function word(next: () => number): string {
  const target = next() * CUMULATIVE[CUMULATIVE.length - 1];
  let low = 0;
  let high = CUMULATIVE.length - 1;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (CUMULATIVE[mid] < target) low = mid + 1;
    else high = mid;
  }
  return VOCABULARY[low];
}

/** One chunk-sized paragraph (120 words, about 160 tokens). */
function paragraph(next: () => number, n: number): string {
  return `Section ${n}. ${Array.from({ length: 120 }, () => word(next)).join(' ')}.`;
}

/** A question-like query: four words of the same distribution. */
function query(next: () => number): string {
  return Array.from({ length: 4 }, () => word(next)).join(' ');
}

interface Latency {
  samples: number;
  p50: number;
  p99: number;
}

async function timed(samples: number, run: (i: number) => Promise<unknown>): Promise<Latency> {
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const start = performance.now();
    await run(i);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { samples, p50: round(percentile(times, 0.5)), p99: round(percentile(times, 0.99)) };
}

const round = (ms: number) => Math.round(ms * 10) / 10;

async function main(): Promise<void> {
  const sizes = (process.env.BENCH_KNOWLEDGE_SIZES ?? '10000,100000').split(',').map(Number);
  const searches = Number(process.env.BENCH_KNOWLEDGE_SEARCHES ?? 100);
  const ingestChunks = Number(process.env.BENCH_KNOWLEDGE_INGEST_CHUNKS ?? 2000);
  const database = await createBenchDatabase(process.env.DATABASE_URL, false);
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    QUICKSTART: 'false',
    LOG_LEVEL: 'error',
    NODE_ENV: 'production',
    RATE_LIMIT_DEFAULT_PER_MINUTE: '0',
    // Woken by the attach; no background polling that would run beside the timed searches.
    VECTOR_STORE_INGEST_POLL_MS: '600000',
    FILES_ORG_MAX_BYTES: '100gb',
    ...database.env,
  });
  const running = await createApp(config, { logger: false });
  const results: Record<string, unknown> = {
    database: database.version,
    startedAt: new Date().toISOString(),
  };
  try {
    await running.app.listen(0, '127.0.0.1');
    const { port } = running.app.getHttpServer().address() as { port: number };
    const base = `http://127.0.0.1:${port}/v1`;
    const dataSource = running.app.get<DataSource>(getDataSourceToken());
    const mode = await running.app.get(VectorIndexProbe).detect();
    results.mode = mode;
    const organization = await running.app.get(OrganizationsService).create({ slug: 'bench-knowledge' });
    const key = (await running.app.get(ApiKeysService).create(organization.id, 'bench', ['full_access']))
      .secret;
    const api = async (method: string, path: string, body?: unknown, form?: FormData) => {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(form ? {} : { 'content-type': 'application/json' }) },
        body: form ?? (body === undefined ? undefined : JSON.stringify(body)),
      });
      const json = (await response.json()) as any;
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
      return json;
    };
    const store = await api('POST', '/vector_stores', { name: 'bench' });
    const storeId = String(store.id).replace(/^vs_/, '');
    const next = random(42);

    // Ingestion through the API.
    const perFile = 100;
    const fileIds: string[] = [];
    let n = 0;
    for (let f = 0; f < Math.ceil(ingestChunks / perFile); f++) {
      const text = Array.from({ length: perFile }, () => paragraph(next, n++)).join('\n\n');
      const form = new FormData();
      form.append('purpose', 'assistants');
      form.append('file', new Blob([text], { type: 'text/markdown' }), `doc-${f}.md`);
      fileIds.push((await api('POST', '/files', undefined, form)).id);
    }
    const ingestStart = performance.now();
    const batch = await api('POST', `/vector_stores/${store.id}/file_batches`, {
      file_ids: fileIds,
      chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 200, chunk_overlap_tokens: 0 } },
    });
    // Polled once a second, and a failed poll is retried: on the embedded database a query
    // concurrent with ingestion can fail or miss its row (the first run of docs/benchmarks.md saw 26).
    let pollErrors = 0;
    for (;;) {
      await new Promise((done) => setTimeout(done, 1000));
      const state = await api('GET', `/vector_stores/${store.id}/file_batches/${batch.id}`).catch(() => {
        pollErrors += 1;
        return { status: 'in_progress' };
      });
      if (state.status !== 'in_progress') break;
    }
    const ingestSeconds = (performance.now() - ingestStart) / 1000;
    const [{ count: ingested }] = await dataSource.query<{ count: string }[]>(
      'SELECT count(*) FROM vector_store_chunks',
    );
    results.ingestion = {
      files: fileIds.length,
      chunks: Number(ingested),
      seconds: round(ingestSeconds),
      chunksPerSecond: Math.round(Number(ingested) / ingestSeconds),
      pollErrors,
    };
    process.stdout.write(`ingestion: ${JSON.stringify(results.ingestion)}\n`);

    // Top up in SQL, into the first file of the store.
    const [target] = await dataSource.query<{ id: string }[]>(
      'SELECT id FROM vector_store_files WHERE organization_id = $1 AND vector_store_id = $2 LIMIT 1',
      [organization.id, storeId],
    );
    const chunkSearch = running.app.get(ChunkSearchRepository);
    const ingestion = running.app.get(IngestionRepository);
    const nearest = (text: string) => ({
      organizationId: organization.id,
      storeIds: [storeId],
      filter: null,
      query: embedLocally(text),
      limit: 100,
    });
    const bySize: Record<string, unknown> = {};
    let total = Number(ingested);
    for (const size of sizes) {
      // Seeded without the HNSW indexes (each insert would update the graph: 7 chunks/s on the
      // embedded database), then rebuilt from their own definitions, timed apart.
      const vectorIndexes = await dropVectorIndexes(dataSource);
      const seedStart = performance.now();
      const seeded = size - total;
      while (total < size) {
        const count = Math.min(500, size - total);
        const texts = Array.from({ length: count }, () => paragraph(next, n++));
        const embeddings = texts.map((text) => embedLocally(text));
        // In a transaction: the embedded database keeps its statements together.
        await dataSource.transaction((manager) =>
          ingestion.insertChunks(
            manager,
            { organizationId: organization.id, vectorStoreId: storeId, id: target.id },
            texts.map((text, i) => ({ text, embedding: embeddings[i] })),
            1_000_000 + total,
            mode,
          ),
        );
        total += count;
      }
      const seedSeconds = (performance.now() - seedStart) / 1000;
      progress(`${size}: seeded ${seeded} chunks in ${round(seedSeconds)} s; building the vector indexes`);
      const indexSeconds = await createIndexes(dataSource, vectorIndexes);
      progress(`${size}: vector indexes built in ${round(indexSeconds)} s; searching`);
      await dataSource.query('ANALYZE vector_store_chunks');
      const queries = Array.from({ length: searches }, () => query(next));
      // Fewer samples at 100k on a loaded machine (at least 30, or all the searches asked for).
      const samples = Math.max(Math.min(30, searches), Math.round(searches * Math.min(1, 10_000 / size)));
      const search = await timed(samples, (i) =>
        api('POST', `/vector_stores/${store.id}/search`, { query: queries[i], max_num_results: 10 }),
      );
      progress(`${size}: hybrid search p50 ${search.p50} ms; timing the vector rankings`);
      // BENCH_KNOWLEDGE_EXACT_SAMPLES=0 skips the exact scan.
      const exactSamples = process.env.BENCH_KNOWLEDGE_EXACT_SAMPLES
        ? Number(process.env.BENCH_KNOWLEDGE_EXACT_SAMPLES)
        : Math.max(Math.min(10, samples), Math.round(samples / 3));
      const exact =
        exactSamples > 0
          ? await timed(exactSamples, (i) => chunkSearch.nearestExact(nearest(queries[i])))
          : null;
      const indexed =
        mode === 'hnsw' ? await timed(samples, (i) => chunkSearch.nearestIndexed(nearest(queries[i]))) : null;
      const lexicalPlan = await explained(dataSource, () =>
        chunkSearch.lexical(organization.id, [storeId], null, queries[0], 100),
      );
      bySize[size] = {
        seeded: {
          chunks: seeded,
          seconds: round(seedSeconds),
          chunksPerSecond: Math.round(seeded / seedSeconds),
        },
        vectorIndexBuild: { indexes: vectorIndexes.length, seconds: round(indexSeconds), chunks: total },
        search,
        ...(exact ? { vectorExactScan: exact } : {}),
        ...(indexed ? { vectorHnsw: indexed } : {}),
        lexicalPlan,
      };
      process.stdout.write(`${size}: ${JSON.stringify(bySize[size])}\n`);
    }
    results.sizes = bySize;
  } finally {
    await running.close();
    await database.drop().catch(() => undefined);
  }
  const dir = resolve('bench/results');
  await mkdir(dir, { recursive: true });
  const file = resolve(
    dir,
    `knowledge-${String(results.mode)}-${new Date().toISOString().replaceAll(':', '-').slice(0, 19)}.json`,
  );
  await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(results, null, 2)}\nwritten to ${file}\n`);
}

/** A phase of the run, with the time, on stderr (the run takes minutes at 100k). */
function progress(line: string): void {
  process.stderr.write(`${new Date().toISOString()} ${line}\n`);
}

/** The plan (EXPLAIN ANALYZE) of the one query `run` sends, as the repository writes it. */
async function explained(dataSource: DataSource, run: () => Promise<unknown>): Promise<string[]> {
  const query = dataSource.query.bind(dataSource);
  let plan: string[] = [];
  dataSource.query = (async (sql: string, parameters?: unknown[]) => {
    const rows = await query<Record<string, string>[]>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, parameters);
    plan = rows.map((row) => row['QUERY PLAN']);
    return [];
  }) as DataSource['query'];
  try {
    await run();
  } finally {
    dataSource.query = query;
  }
  return plan;
}

/**
 * Drops the chunk table's HNSW indexes and answers their definitions as the database holds them
 * (pg_indexes.indexdef: the migration's own statement, normalised), to build them again the same.
 */
async function dropVectorIndexes(dataSource: DataSource): Promise<{ name: string; definition: string }[]> {
  const indexes = await dataSource.query<{ name: string; definition: string }[]>(
    `SELECT indexname AS name, indexdef AS definition FROM pg_indexes
      WHERE schemaname = current_schema() AND tablename = 'vector_store_chunks' AND indexdef ILIKE '% USING hnsw %'
      ORDER BY indexname`,
  );
  for (const index of indexes) await dataSource.query(`DROP INDEX "${index.name}"`);
  return indexes;
}

/** Builds the indexes; answers the seconds it took. */
async function createIndexes(
  dataSource: DataSource,
  indexes: { name: string; definition: string }[],
): Promise<number> {
  const start = performance.now();
  const memory = process.env.BENCH_KNOWLEDGE_INDEX_MEMORY;
  await dataSource.transaction(async (manager) => {
    // The build is fastest when the graph fits in maintenance_work_mem (pgvector's advice); the
    // server's default is kept unless asked (BENCH_KNOWLEDGE_INDEX_MEMORY, e.g. 512MB).
    if (memory) await manager.query(`SELECT set_config('maintenance_work_mem', $1, true)`, [memory]);
    for (const index of indexes) await manager.query(index.definition);
  });
  return (performance.now() - start) / 1000;
}

main().catch((error: unknown) => {
  process.stderr.write(
    `bench:knowledge failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
