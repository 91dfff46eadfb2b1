import { Column, CreateDateColumn, JoinColumn, ManyToOne, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { OrganizationEntity } from './organization.entity.js';

/**
 * The columns every table owned by one organization starts with: a uuid key and
 * `organization_id`, whose rows go when the organization does. Not an entity itself: each
 * subclass is its own table (TypeORM copies inherited columns into it).
 */
export abstract class OrganizationOwnedEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id' })
  organization?: OrganizationEntity;
}

/** An organization-owned row whose `created_at` and `updated_at` the database sets. */
export abstract class TimestampedOrganizationOwnedEntity extends OrganizationOwnedEntity {
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
