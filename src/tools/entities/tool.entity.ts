import type { ConfigAuthorKind } from '../../tenant-config/config-author.js';
import { Column, Entity, JoinColumn, ManyToOne, Unique } from 'typeorm';
import { TimestampedOrganizationOwnedEntity } from '../../organizations/entities/organization-owned.entity.js';
import type { ToolConfig, ToolKind } from '../tool-config.js';
import { PluginEntity } from './plugin.entity.js';

/**
 * A server-side tool of an organization's catalogue, referenced by name from assistants,
 * specialists and MCP gateways. A row of kind `mcp` is a remote MCP server whose tools are
 * discovered when a turn needs them.
 */
@Entity({ name: 'tools' })
@Unique(['organizationId', 'name'])
export class ToolEntity extends TimestampedOrganizationOwnedEntity {
  /** `^[a-zA-Z0-9_-]{1,64}$`, unique within the organization. */
  @Column({ type: 'varchar', length: 64 })
  name!: string;

  @Column({ type: 'varchar', length: 16 })
  kind!: ToolKind;

  @Column({ type: 'text', default: '' })
  description!: string;

  @Column({ name: 'plugin_id', type: 'uuid', nullable: true })
  pluginId!: string | null;

  /** Deleting a plugin leaves its tools in the catalogue, outside any plugin. */
  @ManyToOne(() => PluginEntity, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'plugin_id' })
  plugin?: PluginEntity | null;

  /** Validated per kind by tool-config.ts. */
  @Column({ type: 'jsonb' })
  config!: ToolConfig;

  /** Who last wrote the config: the platform (CLI, platform token) or the organization's admin. */
  @Column({ name: 'configured_by', type: 'varchar', length: 16, default: 'platform' })
  configuredBy!: ConfigAuthorKind;
}
