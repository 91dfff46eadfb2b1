import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { currentRequestContext } from '../../common/logging/request-context.js';
import { keysetPage } from '../../database/keyset.js';
import { AuditLogEntity, type AuditActorType } from './audit-log.entity.js';
import { AuditLogRepository, type AuditCursor } from './audit-log.repository.js';

export interface AuditActor {
  type: AuditActorType;
  /** Key id, token subject, or operating-system user. */
  id: string;
  issuer?: string;
}

export interface AuditChange {
  organizationId: string | null;
  action: string;
  resourceType: string;
  resourceId: string;
  before?: unknown;
  after?: unknown;
}

/** Fields never written to the trail: key hashes and one-time secrets (as views and as rows name them). */
const SECRET_FIELDS = new Set(['keyHash', 'key_hash', 'secret']);
const REDACTED = '[redacted]';

/**
 * A resource as the trail keeps it: plain JSON, without secrets. Header values a tool sends
 * literally may be credentials, so only references to environment variables (`fromEnv`) stay.
 */
export function auditSnapshot(value: unknown, key = ''): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map((item) => auditSnapshot(item));
  if (typeof value !== 'object' || value === null) return value;
  const snapshot: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) {
    if (SECRET_FIELDS.has(name) || field === undefined) continue;
    snapshot[name] = key === 'headers' && typeof field === 'string' ? REDACTED : auditSnapshot(field, name);
  }
  return snapshot;
}

function encodeCursor(position: AuditCursor): string {
  return Buffer.from(`${position.createdAt}|${position.id}`).toString('base64url');
}

/** The cursor a previous page gave, or null when it is not one. */
export function decodeAuditCursor(cursor: string): AuditCursor | null {
  const [createdAt, id, extra] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (extra !== undefined || !createdAt || !id || Number.isNaN(Date.parse(createdAt))) return null;
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)) return null;
  return { createdAt, id };
}

/** Writes the audit trail (in the caller's transaction) and reads it back a page at a time. */
@Injectable()
export class AuditLogService {
  constructor(private readonly repository: AuditLogRepository) {}

  /**
   * Writes the rows in `manager`'s transaction (the change's own); without one, on their own (a
   * refused request, which changed nothing). The request id is the server's, never the client's.
   */
  async record(
    manager: EntityManager | undefined,
    actor: AuditActor,
    changes: readonly AuditChange[],
  ): Promise<void> {
    const request = currentRequestContext();
    const requestId = request ? (request.serverRequestId ?? request.requestId) : null;
    const clientRequestId = request && request.requestId !== requestId ? request.requestId : null;
    await this.repository.insert(
      changes.map((change) =>
        Object.assign(new AuditLogEntity(), {
          id: randomUUID(),
          organizationId: change.organizationId,
          actorType: actor.type,
          actorId: actor.id.slice(0, 255),
          actorIssuer: actor.issuer ?? null,
          action: change.action,
          resourceType: change.resourceType,
          resourceId: change.resourceId,
          before: change.before === undefined ? null : auditSnapshot(change.before),
          after: change.after === undefined ? null : auditSnapshot(change.after),
          requestId,
          clientRequestId,
        }),
      ),
      manager,
    );
  }

  async page(
    organizationId: string | null,
    limit: number,
    after: AuditCursor | null,
  ): Promise<{ items: AuditLogEntity[]; nextCursor: string | null }> {
    const { items, next } = keysetPage(await this.repository.page(organizationId, limit, after), limit);
    return { items: items.map((item) => item.row), nextCursor: next ? encodeCursor(next.position) : null };
  }
}
