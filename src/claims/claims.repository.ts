import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, Repository } from 'typeorm';
import type { ClaimInput } from './dto/claim-input.dto.js';
import { UserClaimEntity } from './entities/user-claim.entity.js';

export interface StoredClaim {
  userId: string;
  claimKey: string;
  claimValue: unknown;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * The columns of a StoredClaim, named as its fields: every statement that reads claims returns
 * them through this one list, so no statement needs its own row mapping.
 */
const CLAIM_COLUMNS = `user_id AS "userId", claim_key AS "claimKey", claim_value AS "claimValue",
       created_at AS "createdAt", updated_at AS "updatedAt"`;

@Injectable()
export class ClaimsRepository {
  private readonly claims: Repository<UserClaimEntity>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.claims = dataSource.getRepository(UserClaimEntity);
  }

  /**
   * Creates or replaces claims of one organization in a single `INSERT … ON CONFLICT DO UPDATE`:
   * no read-then-write race between concurrent writers, and one statement is atomic, so a bulk
   * write lands entirely or not at all. Returns the records in the order given.
   */
  async upsert(organizationId: string, claims: readonly ClaimInput[]): Promise<StoredClaim[]> {
    if (claims.length === 0) return [];
    const parameters: unknown[] = [organizationId];
    const rows = claims.map((claim) => {
      const at = parameters.length + 1;
      // The value travels as JSON text and is cast, so null, strings and arrays stay JSON values.
      parameters.push(randomUUID(), claim.userId, claim.claimKey, JSON.stringify(claim.claimValue));
      return `($${at}::uuid, $1::uuid, $${at + 1}, $${at + 2}, $${at + 3}::jsonb, now(), now())`;
    });
    const returned = await this.dataSource.query<StoredClaim[]>(
      `INSERT INTO user_claims (id, organization_id, user_id, claim_key, claim_value, created_at, updated_at)
       VALUES ${rows.join(', ')}
       ON CONFLICT (organization_id, user_id, claim_key)
       DO UPDATE SET claim_value = EXCLUDED.claim_value, updated_at = EXCLUDED.updated_at
       RETURNING ${CLAIM_COLUMNS}`,
      parameters,
    );
    const byPair = new Map(returned.map((row) => [JSON.stringify([row.userId, row.claimKey]), row]));
    return claims.map((claim) => byPair.get(JSON.stringify([claim.userId, claim.claimKey]))!);
  }

  /** By key in byte order (`COLLATE "C"`), the same on every server whatever its locale. */
  async listForUser(organizationId: string, userId: string): Promise<StoredClaim[]> {
    return this.dataSource.query<StoredClaim[]>(
      `SELECT ${CLAIM_COLUMNS}
         FROM user_claims
        WHERE organization_id = $1 AND user_id = $2
        ORDER BY claim_key COLLATE "C"`,
      [organizationId, userId],
    );
  }

  async findOne(organizationId: string, userId: string, claimKey: string): Promise<StoredClaim | null> {
    const rows = await this.dataSource.query<StoredClaim[]>(
      `SELECT ${CLAIM_COLUMNS}
         FROM user_claims
        WHERE organization_id = $1 AND user_id = $2 AND claim_key = $3`,
      [organizationId, userId, claimKey],
    );
    return rows[0] ?? null;
  }

  /** Real deletion; false when this organization's user has no such claim. */
  async delete(organizationId: string, userId: string, claimKey: string): Promise<boolean> {
    const result = await this.claims.delete({ organizationId, userId, claimKey });
    return (result.affected ?? 0) > 0;
  }

  /** Every claim of one user of one organization, inside the caller's erase transaction. */
  async eraseUserContext(manager: EntityManager, organizationId: string, userId: string): Promise<number> {
    const result = await manager.delete(UserClaimEntity, { organizationId, userId });
    return result.affected ?? 0;
  }
}
