import { Column, CreateDateColumn, JoinColumn, ManyToOne, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { OrganizationEntity } from './organization.entity.js';

/**
 * The columns every table of one organization starts with: a uuid key and `organization_id`,
 * every query's tenant. Not an entity itself: each subclass is its own table (TypeORM copies
 * inherited columns into it). Used alone by tables whose rows go with a parent row of the same
 * organization (a conversation, an assistant) rather than through a key of their own to
 * `organizations`: the turn's hot tables keep one foreign-key check per insert, not two.
 */
export abstract class OrganizationScopedEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;
}

/** A table owned by one organization directly: its rows go when the organization does. */
export abstract class OrganizationOwnedEntity extends OrganizationScopedEntity {
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
