import {
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  Unique,
  UpdateDateColumn,
} from 'typeorm';
import { OrganizationEntity } from '../../organizations/entities/organization.entity.js';

/** The OAuth provider whose user token a plugin's tools need, and where the user signs in. */
export interface PluginOAuth {
  providerId: string;
  requiredScopes: string[];
  authUrl: string;
}

/** A group of tools, shown to users by name; may need the user's token for one OAuth provider. */
@Entity({ name: 'plugins' })
@Unique(['organizationId', 'name'])
export class PluginEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id' })
  organization?: OrganizationEntity;

  @Column({ type: 'varchar', length: 100 })
  name!: string;

  @Column({ type: 'jsonb', nullable: true })
  oauth!: PluginOAuth | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
