import { Column, Entity, Index } from 'typeorm';
import { OrganizationScopedEntity } from '../../organizations/entities/organization-owned.entity.js';

/**
 * A chat-history message: user and assistant text only (tool traffic stays on the response).
 * Every read names the conversation, hence the one index. No foreign key to `responses` (it
 * locked the response row on every insert) nor to `conversations` (two checks per turn): a
 * trigger deletes a response's messages with it (migration 1796530000001), and a conversation's
 * responses go with it (migration 1796670000201).
 */
@Entity({ name: 'messages' })
@Index('IDX_messages_conversation_response', ['conversationId', 'responseId'])
export class MessageEntity extends OrganizationScopedEntity {
  @Column({ name: 'conversation_id', type: 'uuid' })
  conversationId!: string;

  @Column({ name: 'response_id', type: 'uuid' })
  responseId!: string;

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
