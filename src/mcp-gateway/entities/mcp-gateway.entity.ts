import { Column, Entity, Index, Unique } from 'typeorm';
import { TimestampedOrganizationOwnedEntity } from '../../organizations/entities/organization-owned.entity.js';

@Entity({ name: 'mcp_gateways' })
@Index(['organizationId'])
@Index('IDX_mcp_gateways_name', ['name'])
@Unique('UQ_mcp_gateways_organization_name', ['organizationId', 'name'])
export class McpGatewayEntity extends TimestampedOrganizationOwnedEntity {
  /**
   * Unique within the organization only: another organization may use the same name. The
   * gateway URL carries the name; the caller's token says which organization's gateway it is.
   */
  @Column({ type: 'varchar', length: 63 })
  name!: string;

  /** Tool names of the organization's catalogue; `*` exposes every tool of the organization. */
  @Column({ name: 'tool_names', type: 'text', array: true, default: () => "'{}'" })
  toolNames!: string[];
}
