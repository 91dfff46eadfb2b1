import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';
import {
  toVectorLiteral,
  VectorIndexProbe,
  type VectorSearchMode,
} from '../vector-index/vector-index.probe.js';
import type { LastError } from '../vector-store-files.repository.js';

/** Chunks written per INSERT (one statement of arrays, not one per chunk). */
const INSERT_BATCH = 256;

/** One file waiting to be chunked and embedded, leased to this replica. */
export interface IngestionJob {
  id: string;
  organizationId: string;
  vectorStoreId: string;
  fileId: string;
  chunkSize: number;
  chunkOverlap: number;
  attempts: number;
  embedder: string;
}

export interface EmbeddedChunk {
  text: string;
  embedding: Float32Array;
}

/**
 * The ingestion queue: a vector store file `in_progress` is a job. A replica claims the oldest
 * unleased one (SKIP LOCKED, so replicas never claim the same), holds it for `leaseMs`, and
 * ends it in one transaction with its chunks. A replica that dies holding a lease leaves a job
 * whose lease runs out and is claimed again: ingestion survives restarts. This is the only
 * query across organizations (a queue serves them all); everything after it takes the job's.
 */
@Injectable()
export class IngestionRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly vectorIndex: VectorIndexProbe,
  ) {}

  async claim(leaseMs: number): Promise<IngestionJob | null> {
    const [row] = await this.dataSource.query<
      {
        id: string;
        organization_id: string;
        vector_store_id: string;
        file_id: string;
        chunk_size: number;
        chunk_overlap: number;
        attempts: number;
        embedder: string;
      }[]
    >(
      // A CTE around the UPDATE, so the driver answers its rows (not UPDATE's [rows, count]).
      `WITH next AS (
         SELECT id FROM vector_store_files
          WHERE status = 'in_progress' AND (lease_until IS NULL OR lease_until < now())
          ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED),
       claimed AS (
         UPDATE vector_store_files f
            SET lease_until = now() + ($1::integer * interval '1 millisecond'), attempts = f.attempts + 1
           FROM next
          WHERE f.id = next.id
         RETURNING f.id, f.organization_id, f.vector_store_id, f.file_id, f.chunk_size, f.chunk_overlap, f.attempts)
       SELECT claimed.*, s.embedder
         FROM claimed JOIN vector_stores s ON s.id = claimed.vector_store_id AND s.organization_id = claimed.organization_id`,
      [leaseMs],
    );
    if (row === undefined) return null;
    return {
      id: row.id,
      organizationId: row.organization_id,
      vectorStoreId: row.vector_store_id,
      fileId: row.file_id,
      chunkSize: row.chunk_size,
      chunkOverlap: row.chunk_overlap,
      attempts: row.attempts,
      embedder: row.embedder,
    };
  }

  /** The text extracted at upload, of the job's organization's file. */
  async fileText(job: IngestionJob): Promise<{ textStatus: string; text: string | null } | null> {
    const [row] = await this.dataSource.query<{ text_status: string; text: string | null }[]>(
      'SELECT text_status, extracted_text AS text FROM files WHERE organization_id = $1 AND id = $2',
      [job.organizationId, job.fileId],
    );
    return row === undefined ? null : { textStatus: row.text_status, text: row.text };
  }

  /**
   * Stores the chunks and marks the file completed, in one transaction, unless the file was
   * detached, cancelled or attached again meanwhile (then nothing is written).
   */
  async complete(job: IngestionJob, chunks: EmbeddedChunk[]): Promise<boolean> {
    // Read before the transaction opens: a probe that has not asked the database yet (the service's
    // has, before its worker starts; not every caller's) asks on another connection of the pool,
    // and on the embedded database that connection waits for this transaction, which waits for it.
    const mode = await this.vectorIndex.detect();
    return this.dataSource.transaction(async (manager) => {
      const [held] = await manager.query<{ id: string }[]>(
        `SELECT id FROM vector_store_files
          WHERE organization_id = $1 AND id = $2 AND status = 'in_progress' AND attempts = $3 FOR UPDATE`,
        [job.organizationId, job.id, job.attempts],
      );
      if (held === undefined) return false;
      await manager.query(
        'DELETE FROM vector_store_chunks WHERE organization_id = $1 AND vector_store_file_id = $2',
        [job.organizationId, job.id],
      );
      const usageBytes = await this.insertChunks(manager, job, chunks, 0, mode);
      await manager.query(
        `UPDATE vector_store_files SET status = 'completed', usage_bytes = $3, lease_until = NULL, last_error = NULL
          WHERE organization_id = $1 AND id = $2`,
        [job.organizationId, job.id, usageBytes],
      );
      return true;
    });
  }

  /**
   * Writes chunks of a job's file from `firstPosition` on, INSERT_BATCH a statement, in the
   * caller's transaction; answers the bytes they take. With pgvector (`mode` 'hnsw', which the
   * caller reads from VectorIndexProbe before its transaction opens) each embedding also goes to
   * the indexed column. The knowledge bench seeds its corpora with it.
   */
  async insertChunks(
    manager: EntityManager,
    job: Pick<IngestionJob, 'organizationId' | 'vectorStoreId' | 'id'>,
    chunks: EmbeddedChunk[],
    firstPosition: number,
    mode: VectorSearchMode,
  ): Promise<number> {
    const withVector = mode === 'hnsw';
    let usageBytes = 0;
    for (let start = 0; start < chunks.length; start += INSERT_BATCH) {
      const batch = chunks.slice(start, start + INSERT_BATCH);
      const embeddings = batch.map((chunk) =>
        Buffer.from(chunk.embedding.buffer, chunk.embedding.byteOffset, chunk.embedding.byteLength),
      );
      for (const [i, chunk] of batch.entries())
        usageBytes += Buffer.byteLength(chunk.text) + embeddings[i].length;
      const params: unknown[] = [
        job.organizationId,
        job.vectorStoreId,
        job.id,
        batch.map(() => randomUUID()),
        batch.map((_, i) => firstPosition + start + i),
        batch.map((chunk) => chunk.text),
        embeddings,
      ];
      if (withVector) params.push(batch.map((chunk) => toVectorLiteral(chunk.embedding)));
      await manager.query(
        `INSERT INTO vector_store_chunks (organization_id, vector_store_id, vector_store_file_id, id, position, text, embedding${withVector ? ', embedding_vector' : ''})
         SELECT $1::uuid, $2::uuid, $3::uuid, v.id, v.position, v.text, v.embedding${withVector ? ', v.vector::vector' : ''}
           FROM unnest($4::uuid[], $5::integer[], $6::text[], $7::bytea[]${withVector ? ', $8::text[]' : ''})
                AS v(id, position, text, embedding${withVector ? ', vector' : ''})`,
        params,
      );
    }
    return usageBytes;
  }

  async fail(job: IngestionJob, error: LastError): Promise<void> {
    await this.dataSource.query(
      `UPDATE vector_store_files SET status = 'failed', last_error = $4::jsonb, lease_until = NULL
        WHERE organization_id = $1 AND id = $2 AND status = 'in_progress' AND attempts = $3`,
      [job.organizationId, job.id, job.attempts, JSON.stringify(error)],
    );
  }

  /** Gives the job back for another attempt soon (a passing failure: embeddings endpoint down). */
  async release(job: IngestionJob, retryInMs: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE vector_store_files SET lease_until = now() + ($4::integer * interval '1 millisecond')
        WHERE organization_id = $1 AND id = $2 AND status = 'in_progress' AND attempts = $3`,
      [job.organizationId, job.id, job.attempts, retryInMs],
    );
  }
}
