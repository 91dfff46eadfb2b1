import type { ConfigAuthorKind } from '../../tenant-config/config-author.js';
import { Column, Entity, Index } from 'typeorm';
import { TimestampedOrganizationOwnedEntity } from '../../organizations/entities/organization-owned.entity.js';
import type { ModelSettings } from '../../llm/model-settings.js';

@Entity({ name: 'assistants' })
@Index(['organizationId', 'name'])
export class AssistantEntity extends TimestampedOrganizationOwnedEntity {
  @Column({ type: 'varchar', length: 200 })
  name!: string;

  @Column({ type: 'text', default: '' })
  instructions!: string;

  /** Which upstream model answers, and how; validated by `parseModelSettings`. */
  @Column({ type: 'jsonb' })
  model!: ModelSettings;

  /** Who last wrote the model settings: the platform (CLI, platform token) or the organization's admin. */
  @Column({ name: 'configured_by', type: 'varchar', length: 16, default: 'platform' })
  configuredBy!: ConfigAuthorKind;

  /** Server-side tools of the generic path (by name, from the organization's tool catalogue). */
  @Column({ name: 'tool_names', type: 'text', array: true, default: () => "'{}'" })
  toolNames!: string[];
}
