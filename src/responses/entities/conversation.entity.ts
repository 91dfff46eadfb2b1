import { Column, Entity, Index, JoinColumn, ManyToOne } from 'typeorm';
import { AssistantEntity } from '../../assistants/entities/assistant.entity.js';
import { OrganizationOwnedEntity } from '../../organizations/entities/organization-owned.entity.js';

/** A thread of turns; created with its first response, in the same statement. */
@Entity({ name: 'conversations' })
@Index(['organizationId', 'userId', 'updatedAt'])
export class ConversationEntity extends OrganizationOwnedEntity {
  /** Null until an assistant answers in a conversation created through the Conversations API. */
  @Column({ name: 'assistant_id', type: 'uuid', nullable: true })
  assistantId!: string | null;

  @ManyToOne(() => AssistantEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'assistant_id' })
  assistant?: AssistantEntity;

  /** The end user (`x-user-id`); null for an anonymous conversation, which no history lists. */
  @Column({ name: 'user_id', type: 'varchar', length: 256, nullable: true })
  userId!: string | null;

  @Column({ type: 'varchar', length: 200 })
  title!: string;

  /** The newest turn; chat history follows the branch that ends here. */
  @Column({ name: 'last_response_id', type: 'uuid', nullable: true })
  lastResponseId!: string | null;

  /** When the head started: a turn's final write compares its own with it (docs/architecture.md). */
  @Column({ name: 'last_response_created_at', type: 'timestamptz', nullable: true })
  lastResponseCreatedAt!: Date | null;

  /** The Conversations API's metadata: at most 16 string pairs. */
  @Column({ type: 'jsonb', default: {} })
  metadata!: Record<string, string>;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
