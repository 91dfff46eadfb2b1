import type { ConfigAuthorKind } from '../../tenant-config/config-author.js';
import { Column, CreateDateColumn, Entity, JoinColumn, ManyToOne, Unique, UpdateDateColumn } from 'typeorm';
import { AssistantEntity } from '../../assistants/entities/assistant.entity.js';
import type { ModelSettings } from '../../llm/model-settings.js';
import { OrganizationScopedEntity } from '../../organizations/entities/organization-owned.entity.js';

/** A specialist agent of an assistant: its own role, instructions, model and tools. */
@Entity({ name: 'specialists' })
@Unique(['assistantId', 'name'])
export class SpecialistEntity extends OrganizationScopedEntity {
  @Column({ name: 'assistant_id', type: 'uuid' })
  assistantId!: string;

  @ManyToOne(() => AssistantEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'assistant_id' })
  assistant?: AssistantEntity;

  /** Used in the handover tool name `transfer_to_<name>`: lowercase letters, digits, underscores. */
  @Column({ type: 'varchar', length: 48 })
  name!: string;

  /** One line the generic path reads to decide when to hand over. */
  @Column({ type: 'text' })
  role!: string;

  @Column({ type: 'text', default: '' })
  instructions!: string;

  /** Null: the assistant's model. */
  @Column({ type: 'jsonb', nullable: true })
  model!: ModelSettings | null;

  /** Who last wrote the model settings: the platform (CLI, platform token) or the organization's admin. */
  @Column({ name: 'configured_by', type: 'varchar', length: 16, default: 'platform' })
  configuredBy!: ConfigAuthorKind;

  /** Server-side tools (by name, from the organization's tool catalogue). */
  @Column({ name: 'tool_names', type: 'text', array: true, default: () => "'{}'" })
  toolNames!: string[];

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
