import { Column, Entity, Index, JoinColumn, ManyToOne } from 'typeorm';
import { AssistantEntity } from '../../assistants/entities/assistant.entity.js';
import { OrganizationOwnedEntity } from '../../organizations/entities/organization-owned.entity.js';

/**
 * Something the assistant chose to remember about an end user (`save_to_memory`). Each
 * (organization, user, assistant) has its own space; nothing else writes here.
 */
@Entity({ name: 'memory_items' })
// Serves the newest-first reads of one space (a backward scan) and their keyset cursor.
@Index('IDX_memory_items_space_recent', ['organizationId', 'userId', 'assistantId', 'createdAt', 'id'])
export class MemoryItemEntity extends OrganizationOwnedEntity {
  @Column({ name: 'user_id', type: 'varchar', length: 256 })
  userId!: string;

  @Column({ name: 'assistant_id', type: 'uuid' })
  assistantId!: string;

  @ManyToOne(() => AssistantEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'assistant_id' })
  assistant?: AssistantEntity;

  @Column({ type: 'text' })
  content!: string;

  /** Set in code at millisecond precision so the list cursor round-trips exactly. */
  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
