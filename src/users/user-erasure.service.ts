import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ClaimsRepository } from '../claims/claims.repository.js';
import { TransactionalConnection } from '../database/transactional-connection.js';
import { FilesRepository } from '../files/files.repository.js';
import { MemoryRepository } from '../memory/memory.repository.js';
import { TurnStore } from '../responses/store/turn-store.repository.js';
import type { ErasureReport } from './erasure-report.js';

export type { ErasureReport };

/**
 * Erases every trace of one end-user id in one organization: chat history (conversations,
 * responses, messages), claims, memory items and opt-outs, and `user_data` files. One transaction, so an erasure is
 * complete or has not happened; the same user id in another organization is untouched.
 */
@Injectable()
export class UserErasureService {
  constructor(
    private readonly connection: TransactionalConnection,
    private readonly turns: TurnStore,
    private readonly claims: ClaimsRepository,
    private readonly memory: MemoryRepository,
    private readonly files: FilesRepository,
  ) {}

  /**
   * Erases and writes the erasure's audit row (`audit`, given the change to record) in the same
   * transaction: an erasure that rolled back leaves no row, one that committed always has one.
   */
  erase(
    organizationId: string,
    userId: string,
    audit: (manager: EntityManager, change: UserErasureChange) => Promise<void>,
  ): Promise<ErasureReport> {
    return this.connection.withTransaction(async (manager) => {
      const deleted = await this.eraseIn(manager, organizationId, userId);
      await audit(manager, erasureChange(organizationId, userId, deleted));
      return deleted;
    });
  }

  /** The same, in a transaction the caller opened (the admin API's, which also writes the audit row). */
  async eraseIn(manager: EntityManager, organizationId: string, userId: string): Promise<ErasureReport> {
    const history = await this.turns.eraseUserHistory(manager, organizationId, userId);
    const claims = await this.claims.eraseUserContext(manager, organizationId, userId);
    const files = await this.files.eraseUserFiles(manager, organizationId, userId);
    const memory = await this.memory.eraseUserContext(manager, organizationId, userId);
    return {
      ...history,
      claims,
      memoryItems: memory.memoryItems,
      memoryOptOuts: memory.optOuts,
      files,
    };
  }
}

/**
 * What the audit trail names an erased user by: the append-only trail must not keep the id it
 * erased, yet whoever knows the id can check that it was erased (`sha256("<organization id>:<user id>")`, hex).
 */
export function erasedUserReference(organizationId: string, userId: string): string {
  return `sha256:${createHash('sha256').update(`${organizationId}:${userId}`).digest('hex')}`;
}

/** The audit trail's record of an erasure (the admin API's and the CLI's alike). */
export interface UserErasureChange {
  organizationId: string;
  action: 'erased';
  resourceType: 'user';
  resourceId: string;
  after: { deleted: ErasureReport };
}

export function erasureChange(
  organizationId: string,
  userId: string,
  deleted: ErasureReport,
): UserErasureChange {
  // The trail is append-only: it names the erased user by a digest, never by the id itself.
  return {
    organizationId,
    action: 'erased',
    resourceType: 'user',
    resourceId: erasedUserReference(organizationId, userId),
    after: { deleted },
  };
}
