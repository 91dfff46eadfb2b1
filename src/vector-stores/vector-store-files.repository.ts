import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { byTimeEitherWay } from '../database/keyset.js';
import type { AttributeValue } from './search/attribute-filter.js';

export type VectorStoreFileStatus = 'in_progress' | 'completed' | 'failed' | 'cancelled';
export interface LastError {
  code: 'server_error' | 'unsupported_file' | 'invalid_file';
  message: string;
}

export interface VectorStoreFileRecord {
  fileId: string;
  vectorStoreId: string;
  batchId: string | null;
  status: VectorStoreFileStatus;
  lastError: LastError | null;
  attributes: Record<string, AttributeValue>;
  chunkSize: number;
  chunkOverlap: number;
  usageBytes: number;
  createdAt: Date;
}

export interface NewVectorStoreFile {
  id: string;
  organizationId: string;
  vectorStoreId: string;
  fileId: string;
  batchId: string | null;
  attributes: Record<string, AttributeValue>;
  chunkSize: number;
  chunkOverlap: number;
  createdAt: Date;
}

interface FileRow {
  file_id: string;
  vector_store_id: string;
  batch_id: string | null;
  status: VectorStoreFileStatus;
  last_error: LastError | null;
  attributes: Record<string, AttributeValue>;
  chunk_size: number;
  chunk_overlap: number;
  usage_bytes: string;
  created_at: Date;
}

const COLUMNS =
  'f.file_id, f.vector_store_id, f.batch_id, f.status, f.last_error, f.attributes, f.chunk_size, f.chunk_overlap, f.usage_bytes, f.created_at';

const ORDERS = byTimeEitherWay('f.created_at', 'f.file_id');

const toRecord = (row: FileRow): VectorStoreFileRecord => ({
  fileId: row.file_id,
  vectorStoreId: row.vector_store_id,
  batchId: row.batch_id,
  status: row.status,
  lastError: row.last_error,
  attributes: row.attributes,
  chunkSize: row.chunk_size,
  chunkOverlap: row.chunk_overlap,
  usageBytes: Number(row.usage_bytes),
  createdAt: row.created_at,
});

export interface FileListFilter {
  status: VectorStoreFileStatus | null;
  batchId: string | null;
  order: 'asc' | 'desc';
  after: { createdAt: Date; id: string } | null;
  limit: number;
}

/**
 * The files of vector stores, and their batches. Every query takes the organization and the
 * store; a file or batch of another organization is not found.
 */
@Injectable()
export class VectorStoreFilesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async countInStore(manager: EntityManager, organizationId: string, vectorStoreId: string): Promise<number> {
    const [row] = await manager.query<{ count: number }[]>(
      'SELECT count(*)::integer AS count FROM vector_store_files WHERE organization_id = $1 AND vector_store_id = $2',
      [organizationId, vectorStoreId],
    );
    return row.count;
  }

  /**
   * Attaches (or re-attaches, starting its ingestion over) a file of the organization (the
   * INSERT reads it from the organization's files: another's inserts nothing); the worker picks
   * it up.
   */
  async upsert(manager: EntityManager, file: NewVectorStoreFile): Promise<void> {
    await manager.query(
      `INSERT INTO vector_store_files (id, organization_id, vector_store_id, file_id, batch_id, status, attributes,
                                       chunk_size, chunk_overlap, created_at)
       SELECT $1, $2, $3, files.id, $5, 'in_progress', $6::jsonb, $7, $8, $9
         FROM files WHERE files.organization_id = $2 AND files.id = $4
       ON CONFLICT (vector_store_id, file_id) DO UPDATE
          SET batch_id = EXCLUDED.batch_id, status = 'in_progress', last_error = NULL, attributes = EXCLUDED.attributes,
              chunk_size = EXCLUDED.chunk_size, chunk_overlap = EXCLUDED.chunk_overlap, lease_until = NULL, attempts = 0
        WHERE vector_store_files.organization_id = EXCLUDED.organization_id`,
      [
        file.id,
        file.organizationId,
        file.vectorStoreId,
        file.fileId,
        file.batchId,
        JSON.stringify(file.attributes),
        file.chunkSize,
        file.chunkOverlap,
        file.createdAt,
      ],
    );
  }

  async find(
    organizationId: string,
    vectorStoreId: string,
    fileId: string,
  ): Promise<VectorStoreFileRecord | null> {
    const [row] = await this.dataSource.query<FileRow[]>(
      `SELECT ${COLUMNS} FROM vector_store_files f WHERE f.organization_id = $1 AND f.vector_store_id = $2 AND f.file_id = $3`,
      [organizationId, vectorStoreId, fileId],
    );
    return row === undefined ? null : toRecord(row);
  }

  async listPage(
    organizationId: string,
    vectorStoreId: string,
    query: FileListFilter,
  ): Promise<VectorStoreFileRecord[]> {
    const order = ORDERS[query.order];
    const rows = await this.dataSource.query<FileRow[]>(
      `SELECT ${COLUMNS} FROM vector_store_files f
        WHERE f.organization_id = $1 AND f.vector_store_id = $2
          AND ($3::varchar IS NULL OR f.status = $3::varchar)
          AND ($4::uuid IS NULL OR f.batch_id = $4::uuid)
          AND ${order.after(5)}
        ORDER BY ${order.orderBy} LIMIT $7`,
      [
        organizationId,
        vectorStoreId,
        query.status,
        query.batchId,
        query.after?.createdAt ?? null,
        query.after?.id ?? null,
        query.limit,
      ],
    );
    return rows.map(toRecord);
  }

  async updateAttributes(
    organizationId: string,
    vectorStoreId: string,
    fileId: string,
    attributes: Record<string, AttributeValue>,
  ): Promise<boolean> {
    const [row] = await this.dataSource.query<{ count: number }[]>(
      `WITH updated AS (
         UPDATE vector_store_files SET attributes = $4::jsonb
          WHERE organization_id = $1 AND vector_store_id = $2 AND file_id = $3 RETURNING 1)
       SELECT count(*)::integer AS count FROM updated`,
      [organizationId, vectorStoreId, fileId, JSON.stringify(attributes)],
    );
    return row.count > 0;
  }

  /** Detaches a file: its chunks go with it (ON DELETE CASCADE); the file itself stays. */
  async delete(organizationId: string, vectorStoreId: string, fileId: string): Promise<boolean> {
    const [row] = await this.dataSource.query<{ count: number }[]>(
      `WITH deleted AS (
         DELETE FROM vector_store_files WHERE organization_id = $1 AND vector_store_id = $2 AND file_id = $3 RETURNING 1)
       SELECT count(*)::integer AS count FROM deleted`,
      [organizationId, vectorStoreId, fileId],
    );
    return row.count > 0;
  }

  async insertBatch(
    manager: EntityManager,
    batch: { id: string; organizationId: string; vectorStoreId: string; createdAt: Date },
  ): Promise<void> {
    await manager.query(
      'INSERT INTO vector_store_file_batches (id, organization_id, vector_store_id, created_at) VALUES ($1, $2, $3, $4)',
      [batch.id, batch.organizationId, batch.vectorStoreId, batch.createdAt],
    );
  }

  /** A batch with the counts of its files by status; null when it is not this store's. */
  async findBatch(
    organizationId: string,
    vectorStoreId: string,
    batchId: string,
  ): Promise<{ createdAt: Date; counts: Record<VectorStoreFileStatus, number> } | null> {
    const [row] = await this.dataSource.query<
      { created_at: Date; in_progress: number; completed: number; failed: number; cancelled: number }[]
    >(
      `SELECT b.created_at,
              count(f.id) FILTER (WHERE f.status = 'in_progress')::integer AS in_progress,
              count(f.id) FILTER (WHERE f.status = 'completed')::integer AS completed,
              count(f.id) FILTER (WHERE f.status = 'failed')::integer AS failed,
              count(f.id) FILTER (WHERE f.status = 'cancelled')::integer AS cancelled
         FROM vector_store_file_batches b
         LEFT JOIN vector_store_files f ON f.organization_id = b.organization_id AND f.batch_id = b.id
        WHERE b.organization_id = $1 AND b.vector_store_id = $2 AND b.id = $3
        GROUP BY b.id, b.created_at`,
      [organizationId, vectorStoreId, batchId],
    );
    if (row === undefined) return null;
    const { created_at, ...counts } = row;
    return { createdAt: created_at, counts };
  }

  /** Cancels what of a batch is not ingested yet. */
  async cancelBatch(organizationId: string, vectorStoreId: string, batchId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE vector_store_files SET status = 'cancelled', lease_until = NULL
        WHERE organization_id = $1 AND vector_store_id = $2 AND batch_id = $3 AND status = 'in_progress'`,
      [organizationId, vectorStoreId, batchId],
    );
  }
}
