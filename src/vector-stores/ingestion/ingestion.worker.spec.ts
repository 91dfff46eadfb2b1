import type { AppConfig } from '../../config/app-config.js';
import { SchemaReadiness } from '../../database/schema-readiness.js';
import type { EmbeddingsService } from '../embeddings/embeddings.service.js';
import type { IngestionRepository } from './ingestion.repository.js';
import { IngestionWorker } from './ingestion.worker.js';

const config = { vectorStores: { ingestPollMs: 600_000, ingestLeaseMs: 60_000 } } as unknown as AppConfig;

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
