import { Column, Entity, Index } from 'typeorm';
import { TimestampedOrganizationOwnedEntity } from '../../organizations/entities/organization-owned.entity.js';

@Entity({ name: 'mcp_gateways' })
@Index(['organizationId'])
export class McpGatewayEntity extends TimestampedOrganizationOwnedEntity {
  /** Unique across organizations: the gateway URL carries only this name. */
  @Column({ type: 'varchar', length: 63, unique: true })
  name!: string;

  /** Tool names of the organization's catalogue; `*` exposes every tool of the organization. */
  @Column({ name: 'tool_names', type: 'text', array: true, default: () => "'{}'" })
  toolNames!: string[];
}
