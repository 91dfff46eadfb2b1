import { Column, Entity, Unique } from 'typeorm';
import { OrganizationOwnedEntity } from '../../organizations/entities/organization-owned.entity.js';

/**
 * A fact about an end user written by the caller's application, e.g. `plan = "gold"`.
 * One row per (organization, user, claim key); the unique constraint is the upsert's target.
 */
@Entity({ name: 'user_claims' })
@Unique('UQ_user_claims_owner_key', ['organizationId', 'userId', 'claimKey'])
export class UserClaimEntity extends OrganizationOwnedEntity {
  /** The application's opaque end-user id (`x-user-id` on turns). */
  @Column({ name: 'user_id', type: 'varchar', length: 256 })
  userId!: string;

  @Column({ name: 'claim_key', type: 'varchar', length: 128 })
  claimKey!: string;

  /** Any JSON value, JSON null included (stored as the jsonb `null`, never SQL NULL). */
  @Column({ name: 'claim_value', type: 'jsonb' })
  claimValue!: unknown;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
