import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, Repository } from 'typeorm';
import { byTime } from '../database/keyset.js';
import type { MemoryCursor } from './dto/memory-query.dto.js';
import { MemoryItemEntity } from './entities/memory-item.entity.js';
import { MemoryOptOutEntity } from './entities/memory-opt-out.entity.js';
import { OPTED_OUT_SQL } from './memory-opt-out.sql.js';

export interface StoredMemoryItem {
  id: string;
  assistantId: string;
  content: string;
  createdAt: Date;
}

interface ItemRow {
  id: string;
  assistant_id: string;
  content: string;
  created_at: Date;
}

const NEWEST_FIRST = byTime('created_at', 'id', 'DESC');

/**
 * Memory items and opt-outs. Every query takes the organization and the user; `assistantId`
 * null means "every assistant of the organization" wherever it narrows.
 */
@Injectable()
export class MemoryRepository {
  private readonly items: Repository<MemoryItemEntity>;
  private readonly optOuts: Repository<MemoryOptOutEntity>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.items = dataSource.getRepository(MemoryItemEntity);
    this.optOuts = dataSource.getRepository(MemoryOptOutEntity);
  }

  /** One page, newest first, strictly after `after` in that order; `limit` rows at most. */
  async listPage(
    organizationId: string,
    userId: string,
    assistantId: string | null,
    after: MemoryCursor | null,
    limit: number,
  ): Promise<StoredMemoryItem[]> {
    const rows = await this.dataSource.query<ItemRow[]>(
      `SELECT id, assistant_id, content, created_at
         FROM memory_items
        WHERE organization_id = $1 AND user_id = $2
          AND ($3::uuid IS NULL OR assistant_id = $3::uuid)
          AND ${NEWEST_FIRST.after(4)}
        ORDER BY ${NEWEST_FIRST.orderBy}
        LIMIT $6`,
      [organizationId, userId, assistantId, after?.createdAt ?? null, after?.id ?? null, limit],
    );
    return rows.map((row) => ({
      id: row.id,
      assistantId: row.assistant_id,
      content: row.content,
      createdAt: row.created_at,
    }));
  }

  /**
   * Stores an item unless the user opted out (of every assistant or of this one), in one
   * statement so an opt-out committed before it always wins. The same text already remembered
   * in this space is not stored twice: its id is returned instead.
   */
  async saveUnlessOptedOut(item: MemoryItemEntity): Promise<{ optedOut: boolean; id: string | null }> {
    const [row] = await this.dataSource.query<{ opted_out: boolean; id: string | null }[]>(
      `WITH opted_out AS (
         SELECT ${OPTED_OUT_SQL} AS value
       ), existing AS (
         SELECT id FROM memory_items
          WHERE organization_id = $1::uuid AND user_id = $2 AND assistant_id = $3::uuid AND content = $4
          LIMIT 1
       ), inserted AS (
         INSERT INTO memory_items (id, organization_id, user_id, assistant_id, content, created_at)
         SELECT $5::uuid, $1::uuid, $2, $3::uuid, $4, $6::timestamptz
          WHERE NOT (SELECT value FROM opted_out) AND NOT EXISTS (SELECT 1 FROM existing)
         RETURNING id
       )
       SELECT (SELECT value FROM opted_out) AS opted_out,
              COALESCE((SELECT id FROM inserted), (SELECT id FROM existing)) AS id`,
      [item.organizationId, item.userId, item.assistantId, item.content, item.id, item.createdAt],
    );
    return { optedOut: row.opted_out, id: row.opted_out ? null : row.id };
  }

  async deleteAll(organizationId: string, userId: string, assistantId: string | null): Promise<number> {
    const result = await this.items.delete(
      assistantId === null ? { organizationId, userId } : { organizationId, userId, assistantId },
    );
    return result.affected ?? 0;
  }

  async deleteOne(
    organizationId: string,
    userId: string,
    id: string,
    assistantId: string | null,
  ): Promise<boolean> {
    const result = await this.items.delete(
      assistantId === null ? { id, organizationId, userId } : { id, organizationId, userId, assistantId },
    );
    return (result.affected ?? 0) > 0;
  }

  /**
   * With an assistant: opted out of it, directly or through an opt-out of every assistant.
   * Without: opted out of every assistant.
   */
  async isOptedOut(organizationId: string, userId: string, assistantId: string | null): Promise<boolean> {
    const [row] = await this.dataSource.query<{ value: boolean }[]>(`SELECT ${OPTED_OUT_SQL} AS value`, [
      organizationId,
      userId,
      assistantId,
    ]);
    return row.value;
  }

  /** Idempotent: a second opt-out of the same scope changes nothing. */
  async addOptOut(optOut: MemoryOptOutEntity): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO memory_opt_outs (id, organization_id, user_id, assistant_id, created_at)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT DO NOTHING`,
      [optOut.id, optOut.organizationId, optOut.userId, optOut.assistantId, optOut.createdAt],
    );
  }

  /** Without an assistant every opt-out of the user goes; with one, only that assistant's. */
  async removeOptOuts(organizationId: string, userId: string, assistantId: string | null): Promise<void> {
    await this.optOuts.delete(
      assistantId === null ? { organizationId, userId } : { organizationId, userId, assistantId },
    );
  }

  /** Every memory item and opt-out of one user of one organization, inside the caller's transaction. */
  async eraseUserContext(
    manager: EntityManager,
    organizationId: string,
    userId: string,
  ): Promise<{ memoryItems: number; optOuts: number }> {
    const items = await manager.delete(MemoryItemEntity, { organizationId, userId });
    const optOuts = await manager.delete(MemoryOptOutEntity, { organizationId, userId });
    return { memoryItems: items.affected ?? 0, optOuts: optOuts.affected ?? 0 };
  }
}
