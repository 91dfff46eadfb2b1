import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { byTimeEitherWay } from '../database/keyset.js';

export interface FileCounts {
  in_progress: number;
  completed: number;
  failed: number;
  cancelled: number;
  total: number;
}

/** What a vector store is created with and keeps. */
interface VectorStoreFields {
  id: string;
  name: string;
  description: string | null;
  metadata: Record<string, string>;
  expiresAfterDays: number | null;
  embedder: string;
  createdAt: Date;
}

export interface VectorStoreRecord extends VectorStoreFields {
  lastActiveAt: Date;
  fileCounts: FileCounts;
  usageBytes: number;
}

export interface NewVectorStore extends VectorStoreFields {
  organizationId: string;
}

interface StoreRow {
  id: string;
  name: string;
  description: string | null;
  metadata: Record<string, string>;
  expires_after_days: number | null;
  embedder: string;
  created_at: Date;
  last_active_at: Date;
  in_progress: number;
  completed: number;
  failed: number;
  cancelled: number;
  usage_bytes: string;
}

/** A store with its files' counts and bytes, each counted among the store's own organization's rows. */
const STORE_SELECT = `
  SELECT s.id, s.name, s.description, s.metadata, s.expires_after_days, s.embedder, s.created_at,
         s.last_active_at, c.in_progress, c.completed, c.failed, c.cancelled, c.usage_bytes
    FROM vector_stores s
   CROSS JOIN LATERAL (
     SELECT count(*) FILTER (WHERE f.status = 'in_progress')::integer AS in_progress,
            count(*) FILTER (WHERE f.status = 'completed')::integer AS completed,
            count(*) FILTER (WHERE f.status = 'failed')::integer AS failed,
            count(*) FILTER (WHERE f.status = 'cancelled')::integer AS cancelled,
            COALESCE(sum(f.usage_bytes), 0)::bigint AS usage_bytes
       FROM vector_store_files f
      WHERE f.organization_id = s.organization_id AND f.vector_store_id = s.id) c`;

const ORDERS = byTimeEitherWay('s.created_at', 's.id');

function toRecord(row: StoreRow): VectorStoreRecord {
  const counts = {
    in_progress: row.in_progress,
    completed: row.completed,
    failed: row.failed,
    cancelled: row.cancelled,
  };
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    metadata: row.metadata,
    expiresAfterDays: row.expires_after_days,
    embedder: row.embedder,
    createdAt: row.created_at,
    lastActiveAt: row.last_active_at,
    fileCounts: {
      ...counts,
      total: counts.in_progress + counts.completed + counts.failed + counts.cancelled,
    },
    usageBytes: Number(row.usage_bytes),
  };
}

/** Vector stores. Every query takes the organization; another organization's store is not found. */
@Injectable()
export class VectorStoresRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async countInOrganization(manager: EntityManager, organizationId: string): Promise<number> {
    // The organization's row is locked so concurrent creations cannot both pass the quota.
    await manager.query('SELECT id FROM organizations WHERE id = $1 FOR UPDATE', [organizationId]);
    const [row] = await manager.query<{ count: number }[]>(
      'SELECT count(*)::integer AS count FROM vector_stores WHERE organization_id = $1',
      [organizationId],
    );
    return row.count;
  }

  async insert(manager: EntityManager, store: NewVectorStore): Promise<void> {
    await manager.query(
      `INSERT INTO vector_stores (id, organization_id, name, description, metadata, expires_after_days, embedder,
                                  created_at, last_active_at)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $8)`,
      [
        store.id,
        store.organizationId,
        store.name,
        store.description,
        JSON.stringify(store.metadata),
        store.expiresAfterDays,
        store.embedder,
        store.createdAt,
      ],
    );
  }

  async find(organizationId: string, id: string, manager?: EntityManager): Promise<VectorStoreRecord | null> {
    const [row] = await (manager ?? this.dataSource).query<StoreRow[]>(
      `${STORE_SELECT} WHERE s.organization_id = $1 AND s.id = $2`,
      [organizationId, id],
    );
    return row === undefined ? null : toRecord(row);
  }

  /** The stores of the organization among `ids` (the others do not exist for it). */
  async findMany(organizationId: string, ids: string[]): Promise<VectorStoreRecord[]> {
    const rows = await this.dataSource.query<StoreRow[]>(
      `${STORE_SELECT} WHERE s.organization_id = $1 AND s.id = ANY($2::uuid[])`,
      [organizationId, ids],
    );
    return rows.map(toRecord);
  }

  async listPage(
    organizationId: string,
    query: { order: 'asc' | 'desc'; after: { createdAt: Date; id: string } | null; limit: number },
  ): Promise<VectorStoreRecord[]> {
    const order = ORDERS[query.order];
    const rows = await this.dataSource.query<StoreRow[]>(
      `${STORE_SELECT} WHERE s.organization_id = $1 AND ${order.after(2)} ORDER BY ${order.orderBy} LIMIT $4`,
      [organizationId, query.after?.createdAt ?? null, query.after?.id ?? null, query.limit],
    );
    return rows.map(toRecord);
  }

  /** Changes the fields given (undefined: unchanged); false when the store is not the organization's. */
  async update(
    organizationId: string,
    id: string,
    changes: { name?: string; metadata?: Record<string, string>; expiresAfterDays?: number | null },
  ): Promise<boolean> {
    const [row] = await this.dataSource.query<{ count: number }[]>(
      `WITH updated AS (
         UPDATE vector_stores
            SET name = COALESCE($3, name),
                metadata = COALESCE($4::jsonb, metadata),
                expires_after_days = CASE WHEN $5::boolean THEN $6::integer ELSE expires_after_days END
          WHERE organization_id = $1 AND id = $2 RETURNING 1)
       SELECT count(*)::integer AS count FROM updated`,
      [
        organizationId,
        id,
        changes.name ?? null,
        changes.metadata === undefined ? null : JSON.stringify(changes.metadata),
        changes.expiresAfterDays !== undefined,
        changes.expiresAfterDays ?? null,
      ],
    );
    return row.count > 0;
  }

  /** A search or an attached file keeps a store alive (expires_after counts from the last activity). */
  async touch(organizationId: string, ids: string[], manager?: EntityManager): Promise<void> {
    await (manager ?? this.dataSource).query(
      'UPDATE vector_stores SET last_active_at = now() WHERE organization_id = $1 AND id = ANY($2::uuid[])',
      [organizationId, ids],
    );
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    const [row] = await this.dataSource.query<{ count: number }[]>(
      `WITH deleted AS (DELETE FROM vector_stores WHERE organization_id = $1 AND id = $2 RETURNING 1)
       SELECT count(*)::integer AS count FROM deleted`,
      [organizationId, id],
    );
    return row.count > 0;
  }
}
