import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  UpdateDateColumn,
} from 'typeorm';
import { OrganizationEntity } from '../../organizations/entities/organization.entity.js';

@Entity({ name: 'mcp_gateways' })
export class McpGatewayEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Index()
  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id' })
  organization?: OrganizationEntity;

  /** Unique across organizations: the gateway URL carries only this name. */
  @Column({ type: 'varchar', length: 63, unique: true })
  name!: string;

  /** Tool names of the organization's catalogue; `*` exposes every tool of the organization. */
  @Column({ name: 'tool_names', type: 'text', array: true, default: () => "'{}'" })
  toolNames!: string[];

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
