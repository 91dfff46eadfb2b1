import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SchemaReadiness } from '../../database/schema-readiness.js';

/**
 * How vector similarity is computed: `hnsw` where the database has pgvector and the
 * vector-index migration added the `embedding_vector` column (an HNSW index per indexed
 * dimension, exact in-database order for the others), `exact-scan` otherwise (every candidate's
 * Float32 embedding is read and compared by the service).
 */
/** The text form pgvector reads: `[0.1,0.2,…]`. */
export function toVectorLiteral(vector: Float32Array): string {
  return `[${vector.join(',')}]`;
}

export type VectorSearchMode = 'hnsw' | 'exact-scan';

/**
 * Detects the vector search mode once, after the migrations ran at boot (create-app), and
 * answers it to the search and ingestion repositories. Asked before that (nothing in the
 * service does: its workers start after the probe), it answers what the schema has now without
 * remembering it, since the vector-index migration may still add the column. A database
 * migrated later (the CLI, after a boot with MIGRATIONS_RUN_ON_BOOT=false) is seen by the next
 * boot: until then the exact scan stays in use, which is correct, only slower.
 */
@Injectable()
export class VectorIndexProbe {
  private detected: Promise<VectorSearchMode> | undefined;
  private readonly logger = new Logger('VectorIndex');

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly readiness: SchemaReadiness,
  ) {}

  /** Detects (once the schema is migrated, then never again) and logs the mode. */
  detect(): Promise<VectorSearchMode> {
    if (!this.readiness.migrated) return this.probe();
    this.detected ??= this.probe().catch((error: unknown) => {
      this.detected = undefined; // a database outage at boot: ask again next time
      throw error;
    });
    return this.detected;
  }

  private async probe(): Promise<VectorSearchMode> {
    const [row] = await this.dataSource.query<{ column: boolean; available: boolean }[]>(
      `SELECT EXISTS (SELECT 1 FROM information_schema.columns
                       WHERE table_schema = current_schema() AND table_name = 'vector_store_chunks'
                         AND column_name = 'embedding_vector') AS "column",
              EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') AS available`,
    );
    const mode: VectorSearchMode = row.column ? 'hnsw' : 'exact-scan';
    this.logger.log({
      msg: 'vector search mode',
      mode,
      ...(mode === 'exact-scan' && row.available
        ? {
            hint: 'pgvector is available but not installed for this schema: see docs/knowledge.md "Vector index"',
          }
        : {}),
    });
    return mode;
  }
}
