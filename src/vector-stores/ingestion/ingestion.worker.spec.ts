import { jest } from '@jest/globals';
import type { AppConfig } from '../../config/app-config.js';
import { SchemaReadiness } from '../../database/schema-readiness.js';
import type { EmbeddingsService } from '../embeddings/embeddings.service.js';
import type { IngestionJob, IngestionRepository } from './ingestion.repository.js';
import { IngestionWorker } from './ingestion.worker.js';

const config = {
  vectorStores: { ingestPollMs: 600_000, ingestPollMaxMs: 600_000, ingestLeaseMs: 60_000 },
} as unknown as AppConfig;

/** A worker over an empty queue that counts its claims. */
function countedWorker() {
  const readiness = new SchemaReadiness();
  const counted = { claims: 0 };
  const queue = {
    claim: () => {
      counted.claims += 1;
      return Promise.resolve(null);
    },
  } as unknown as IngestionRepository;
  const worker = new IngestionWorker(queue, {} as EmbeddingsService, readiness, config);
  return { worker, readiness, counted };
}

describe('IngestionWorker start', () => {
  it('claims nothing before the boot has migrated the schema, and drains at once after', async () => {
    const { worker, readiness, counted } = countedWorker();
    worker.onApplicationBootstrap();
    worker.wake(); // an attach before the start: its file waits for the start's drain
    expect(counted.claims).toBe(0);

    readiness.markMigrated();
    readiness.markReady();
    await readiness.ready;
    expect(counted.claims).toBe(1);
    await worker.onModuleDestroy();
  });

  it('never starts when the app closes before its boot was ready', async () => {
    const { worker, readiness, counted } = countedWorker();
    worker.onApplicationBootstrap();
    await worker.onModuleDestroy();
    readiness.markReady();
    await readiness.ready;
    worker.wake();
    expect(counted.claims).toBe(0);
  });
});

/** A worker whose queue answers `jobs` in turn (null when they run out), started at once. */
async function startedWorker(jobs: (IngestionJob | null | Promise<null>)[]) {
  const readiness = new SchemaReadiness();
  const claims: number[] = [];
  const queue = {
    claim: () => {
      claims.push(Date.now());
      return Promise.resolve(jobs.shift() ?? null);
    },
    // The file was deleted meanwhile: the job ends without embedding anything.
    fileText: () => Promise.resolve(null),
  } as unknown as IngestionRepository;
  const settings = { ingestPollMs: 1000, ingestPollMaxMs: 8000, ingestLeaseMs: 60_000 };
  const worker = new IngestionWorker(queue, {} as EmbeddingsService, readiness, {
    vectorStores: settings,
  } as unknown as AppConfig);
  worker.onApplicationBootstrap();
  readiness.markMigrated();
  readiness.markReady();
  await jest.advanceTimersByTimeAsync(0);
  return { worker, claims };
}

describe('IngestionWorker polling', () => {
  beforeEach(() => jest.useFakeTimers({ now: 0 }));
  afterEach(() => jest.useRealTimers());

  it('looks for work less often while the queue stays empty, up to the longest wait', async () => {
    const { worker, claims } = await startedWorker([]);
    await jest.advanceTimersByTimeAsync(40_000);
    expect(claims).toEqual([0, 1000, 3000, 7000, 15_000, 23_000, 31_000, 39_000]);
    await worker.onModuleDestroy();
  });

  it("takes a file no replica woke it for (another replica's) on its timer, then looks again at the shortest interval", async () => {
    const job = { id: 'file', attempts: 1 } as unknown as IngestionJob;
    // Empty at the start and at 1 s; the file is there at 3 s.
    const { worker, claims } = await startedWorker([null, null, job]);
    await jest.advanceTimersByTimeAsync(12_000);
    // At 3 s: the file, then the empty claim that ends the drain; then 1 s, 2 s, 4 s again.
    expect(claims).toEqual([0, 1000, 3000, 3000, 4000, 6000, 10_000]);
    await worker.onModuleDestroy();
  });

  it('looks at once when an attach on this replica wakes it, and at the shortest interval after', async () => {
    const { worker, claims } = await startedWorker([]);
    await jest.advanceTimersByTimeAsync(16_000); // looked at 0, 1, 3, 7 and 15 s: next at 23 s
    worker.wake();
    await jest.advanceTimersByTimeAsync(3500);
    expect(claims).toEqual([0, 1000, 3000, 7000, 15_000, 16_000, 17_000, 19_000]);
    await worker.onModuleDestroy();
  });

  it('runs one more look at once when a wake came during a look, then the shortest interval', async () => {
    let release = (_: null): void => undefined;
    const held = new Promise<null>((resolve) => (release = resolve));
    // The look at 1 s waits on its claim until 1.5 s.
    const { worker, claims } = await startedWorker([null, held]);
    await jest.advanceTimersByTimeAsync(1200);
    worker.wake(); // an attach while the look runs
    expect(claims).toEqual([0, 1000]);
    await jest.advanceTimersByTimeAsync(300);
    release(null);
    await jest.advanceTimersByTimeAsync(1000);
    expect(claims).toEqual([0, 1000, 1500, 2500]);
    await worker.onModuleDestroy();
  });

  it('stops looking once the app closes', async () => {
    const { worker, claims } = await startedWorker([]);
    await worker.onModuleDestroy();
    await jest.advanceTimersByTimeAsync(60_000);
    worker.wake();
    expect(claims).toEqual([0]);
  });
});
