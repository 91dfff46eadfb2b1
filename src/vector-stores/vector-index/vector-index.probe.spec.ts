import type { DataSource } from 'typeorm';
import { SchemaReadiness } from '../../database/schema-readiness.js';
import { VectorIndexProbe } from './vector-index.probe.js';

/** A database whose `embedding_vector` column the test adds, as the vector-index migration does. */
function database() {
  const state = { column: false, queries: 0 };
  const dataSource = {
    query: () => {
      state.queries += 1;
      return Promise.resolve([{ column: state.column, available: true }]);
    },
  } as unknown as DataSource;
  return { state, dataSource };
}

describe('VectorIndexProbe', () => {
  it('does not remember what the schema looked like before the boot migrated it', async () => {
    const { state, dataSource } = database();
    const readiness = new SchemaReadiness();
    const probe = new VectorIndexProbe(dataSource, readiness);
    expect(await probe.detect()).toBe('exact-scan');

    state.column = true; // the migration ran
    readiness.markMigrated();
    expect(await probe.detect()).toBe('hnsw');
    const asked = state.queries;
    expect(await probe.detect()).toBe('hnsw');
    expect(state.queries).toBe(asked); // remembered from here on
  });
});
