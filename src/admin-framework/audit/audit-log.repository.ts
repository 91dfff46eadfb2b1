import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import { byTime } from '../../database/keyset.js';
import { TransactionalConnection } from '../../database/transactional-connection.js';
import { AuditLogEntity } from './audit-log.entity.js';

/** Newest first; the id breaks ties between rows of one transaction (same `now()`). */
const AUDIT_ORDER = byTime('created_at', 'id', 'DESC');

export interface AuditCursor {
  createdAt: string;
  id: string;
}

@Injectable()
export class AuditLogRepository {
  constructor(private readonly connection: TransactionalConnection) {}

  /** Inside the transaction of the change it records. */
  async insert(rows: AuditLogEntity[], manager: EntityManager | undefined): Promise<void> {
    // `before`/`after` are plain JSON already; TypeORM's partial-entity type cannot express `unknown`.
    const values = rows as QueryDeepPartialEntity<AuditLogEntity>[];
    if (rows.length > 0) await this.connection.getRepository(AuditLogEntity, manager).insert(values);
  }

  /**
   * One page, newest first, `limit + 1` rows. `organizationId` null reads every organization (a
   * platform administrator); otherwise the organization is in the query itself.
   */
  async page(
    organizationId: string | null,
    limit: number,
    after: AuditCursor | null,
  ): Promise<{ row: AuditLogEntity; position: AuditCursor }[]> {
    const rows: Record<string, unknown>[] = await this.connection.getRepository(AuditLogEntity).query(
      `SELECT id, organization_id, actor_type, actor_id, actor_issuer, action, resource_type, resource_id,
              before, after, request_id, client_request_id, created_at,
              created_at::text AS position
         FROM audit_log
        WHERE ($1::uuid IS NULL OR organization_id = $1::uuid) AND ${AUDIT_ORDER.after(2)}
        ORDER BY ${AUDIT_ORDER.orderBy}
        LIMIT $4`,
      [organizationId, after?.createdAt ?? null, after?.id ?? null, limit + 1],
    );
    // The position keeps PostgreSQL's microseconds, which a JavaScript Date would round away.
    return rows.map((row) => ({
      position: { createdAt: row.position as string, id: row.id as string },
      row: Object.assign(new AuditLogEntity(), {
        id: row.id,
        organizationId: row.organization_id,
        actorType: row.actor_type,
        actorId: row.actor_id,
        actorIssuer: row.actor_issuer,
        action: row.action,
        resourceType: row.resource_type,
        resourceId: row.resource_id,
        before: row.before,
        after: row.after,
        requestId: row.request_id,
        clientRequestId: row.client_request_id,
        createdAt: new Date(row.created_at as string),
      }),
    }));
  }
}
