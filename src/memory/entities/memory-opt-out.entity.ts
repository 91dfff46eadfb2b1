import { Column, Entity, Index, JoinColumn, ManyToOne } from 'typeorm';
import { AssistantEntity } from '../../assistants/entities/assistant.entity.js';
import { OrganizationOwnedEntity } from '../../organizations/entities/organization-owned.entity.js';

/**
 * An end user's refusal of memory: nothing is loaded or saved for them, with every assistant of
 * the organization (`assistant_id` null) or with one assistant. Two partial unique indexes keep
 * one row per scope (a plain unique constraint would let several NULL rows coexist).
 */
@Entity({ name: 'memory_opt_outs' })
@Index('UQ_memory_opt_outs_all_assistants', ['organizationId', 'userId'], {
  unique: true,
  where: '"assistant_id" IS NULL',
})
@Index('UQ_memory_opt_outs_one_assistant', ['organizationId', 'userId', 'assistantId'], {
  unique: true,
  where: '"assistant_id" IS NOT NULL',
})
export class MemoryOptOutEntity extends OrganizationOwnedEntity {
  @Column({ name: 'user_id', type: 'varchar', length: 256 })
  userId!: string;

  /** Null: every assistant of the organization. */
  @Column({ name: 'assistant_id', type: 'uuid', nullable: true })
  assistantId!: string | null;

  @ManyToOne(() => AssistantEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'assistant_id' })
  assistant?: AssistantEntity;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
