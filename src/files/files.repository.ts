import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { byTimeEitherWay } from '../database/keyset.js';
import type { StoredFileEntity, TextStatus } from './entities/stored-file.entity.js';

/** A file without its bytes: what lists and retrieves read. */
export interface FileRecord {
  id: string;
  userId: string | null;
  purpose: string;
  filename: string;
  bytes: number;
  textStatus: TextStatus;
  createdAt: Date;
  expiresAt: Date | null;
}

interface FileRow {
  id: string;
  user_id: string | null;
  purpose: string;
  filename: string;
  bytes: string;
  text_status: TextStatus;
  created_at: Date;
  expires_at: Date | null;
}

export interface FileListQuery {
  purpose: string | null;
  /** The last file of the previous page. */
  after: { createdAt: Date; id: string } | null;
  order: 'asc' | 'desc';
  limit: number;
}

const ORDERS = byTimeEitherWay('created_at', 'id');

const RECORD_COLUMNS = 'id, user_id, purpose, filename, bytes, text_status, created_at, expires_at';

/**
 * The condition "visible to this caller": of the organization ($1), and either organization-wide
 * (`user_id` null) or the `user_data` of the caller's end user ($2; null sees none).
 */
const VISIBLE = 'organization_id = $1::uuid AND (user_id IS NULL OR user_id = $2::varchar)';

function toRecord(row: FileRow): FileRecord {
  return {
    id: row.id,
    userId: row.user_id,
    purpose: row.purpose,
    filename: row.filename,
    bytes: Number(row.bytes),
    textStatus: row.text_status,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

/**
 * Files. Every query takes the organization and the caller's end user (`userId`, null without
 * `x-user-id`), and finds only what that caller may see (`VISIBLE`).
 */
@Injectable()
export class FilesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Stores the file unless the organization's files would then exceed `organizationMaxBytes`.
   * The organization's row is locked for the check, so concurrent uploads cannot both fit.
   */
  async insertWithinQuota(file: StoredFileEntity, organizationMaxBytes: number): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT id FROM organizations WHERE id = $1 FOR UPDATE', [file.organizationId]);
      const [inserted] = await manager.query<{ id: string }[]>(
        `INSERT INTO files (id, organization_id, user_id, purpose, filename, media_type, bytes, content,
                            text_status, extracted_text, created_at, expires_at)
         SELECT $1::uuid, $2::uuid, $3::varchar, $4::varchar, $5::varchar, $6::varchar, $7::bigint, $8::bytea,
                $9::varchar, $10::text, $11::timestamptz, $12::timestamptz
          WHERE (SELECT COALESCE(SUM(bytes), 0) FROM files WHERE organization_id = $2::uuid) + $7::bigint
                <= $13::bigint
         RETURNING id`,
        [
          file.id,
          file.organizationId,
          file.userId,
          file.purpose,
          file.filename,
          file.mediaType,
          file.bytes,
          file.content,
          file.textStatus,
          file.extractedText,
          file.createdAt,
          file.expiresAt,
          organizationMaxBytes,
        ],
      );
      return inserted !== undefined;
    });
  }

  async find(organizationId: string, userId: string | null, id: string): Promise<FileRecord | null> {
    const [row] = await this.dataSource.query<FileRow[]>(
      `SELECT ${RECORD_COLUMNS} FROM files WHERE ${VISIBLE} AND id = $3`,
      [organizationId, userId, id],
    );
    return row === undefined ? null : toRecord(row);
  }

  /** The bytes of one file, with its name. */
  async findContent(
    organizationId: string,
    userId: string | null,
    id: string,
  ): Promise<{ filename: string; content: Buffer } | null> {
    const [row] = await this.dataSource.query<{ filename: string; content: Buffer }[]>(
      `SELECT filename, content FROM files WHERE ${VISIBLE} AND id = $3`,
      [organizationId, userId, id],
    );
    return row ?? null;
  }

  /** The text extracted at upload (null when unavailable), for chunking. */
  async findText(
    organizationId: string,
    userId: string | null,
    id: string,
  ): Promise<{ filename: string; textStatus: TextStatus; text: string | null } | null> {
    const [row] = await this.dataSource.query<
      { filename: string; text_status: TextStatus; text: string | null }[]
    >(`SELECT filename, text_status, extracted_text AS text FROM files WHERE ${VISIBLE} AND id = $3`, [
      organizationId,
      userId,
      id,
    ]);
    return row === undefined ? null : { filename: row.filename, textStatus: row.text_status, text: row.text };
  }

  /** One page in the query's order, strictly after `after`; `limit` rows at most. */
  async listPage(organizationId: string, userId: string | null, query: FileListQuery): Promise<FileRecord[]> {
    const order = ORDERS[query.order];
    const rows = await this.dataSource.query<FileRow[]>(
      `SELECT ${RECORD_COLUMNS} FROM files
        WHERE ${VISIBLE}
          AND ($3::varchar IS NULL OR purpose = $3::varchar)
          AND ${order.after(4)}
        ORDER BY ${order.orderBy}
        LIMIT $6`,
      [
        organizationId,
        userId,
        query.purpose,
        query.after?.createdAt ?? null,
        query.after?.id ?? null,
        query.limit,
      ],
    );
    return rows.map(toRecord);
  }

  async delete(organizationId: string, userId: string | null, id: string): Promise<boolean> {
    // A CTE so the driver answers rows, not DELETE's [rows, count].
    const [row] = await this.dataSource.query<{ count: number }[]>(
      `WITH deleted AS (DELETE FROM files WHERE ${VISIBLE} AND id = $3 RETURNING 1)
       SELECT count(*)::integer AS count FROM deleted`,
      [organizationId, userId, id],
    );
    return row.count > 0;
  }

  /** Every `user_data` file of one end user of one organization, inside the caller's transaction. */
  async eraseUserFiles(manager: EntityManager, organizationId: string, userId: string): Promise<number> {
    const [row] = await manager.query<{ count: number }[]>(
      `WITH deleted AS (DELETE FROM files WHERE organization_id = $1 AND user_id = $2 RETURNING 1)
       SELECT count(*)::integer AS count FROM deleted`,
      [organizationId, userId],
    );
    return row.count;
  }
}
