import { Column, Entity, Index, JoinColumn, ManyToOne } from 'typeorm';
import { OrganizationScopedEntity } from '../../organizations/entities/organization-owned.entity.js';
import { ResponseEntity } from './response.entity.js';
import { ConversationEntity } from './conversation.entity.js';

/** A chat-history message: user and assistant text only (tool traffic stays on the response). */
@Entity({ name: 'messages' })
@Index(['conversationId', 'createdAt'])
export class MessageEntity extends OrganizationScopedEntity {
  @Column({ name: 'conversation_id', type: 'uuid' })
  conversationId!: string;

  @ManyToOne(() => ConversationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'conversation_id' })
  conversation?: ConversationEntity;

  @Index()
  @Column({ name: 'response_id', type: 'uuid' })
  responseId!: string;

  @ManyToOne(() => ResponseEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'response_id' })
  response?: ResponseEntity;

  @Column({ name: 'user_id', type: 'varchar', length: 256, nullable: true })
  userId!: string | null;

  @Column({ type: 'varchar', length: 16 })
  role!: 'user' | 'assistant';

  @Column({ type: 'text' })
  content!: string;

  /** Orders the messages of one turn: the user's input before the reply. */
  @Column({ type: 'smallint', default: 0 })
  position!: number;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
