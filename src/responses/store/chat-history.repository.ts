import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { byTime, KeysetOrder } from '../../database/keyset.js';

/** A position in the conversation list (most recently updated first). */
export interface ConversationCursor {
  /** `updated_at` at microsecond precision, as PostgreSQL stores it, so the position is exact. */
  updatedAt: string;
  id: string;
}

/** A position on a branch (oldest first): the turn's depth, then the message's place in it. */
export interface MessageCursor {
  depth: number;
  position: number;
}

export interface StoredConversation {
  id: string;
  /** Null for a conversation created through the Conversations API that no assistant answered yet. */
  assistantId: string | null;
  title: string;
  createdAt: Date;
  updatedAt: Date;
  /** The list's sort key at full (microsecond) precision, for the next page's cursor. */
  cursor: ConversationCursor;
}

export interface StoredMessage {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  createdAt: Date;
  cursor: MessageCursor;
}

interface ConversationRow {
  id: string;
  assistant_id: string | null;
  title: string;
  created_at: Date;
  updated_at: Date;
  updated_at_key: string;
}

interface MessageRow {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  created_at: Date;
  depth: number;
  position: number;
}

/** Most recently updated first (the (organization_id, user_id, updated_at) index, read backwards). */
const CONVERSATION_ORDER = byTime('updated_at', 'id', 'DESC');

/** Oldest first along a branch: the turn's depth, then the message's place in the turn. */
const MESSAGE_ORDER = new KeysetOrder(
  { sql: 'b.depth', type: 'integer' },
  { sql: 'm.position', type: 'integer' },
  'ASC',
);

/**
 * Chat history reads of the turn store's tables (written only by TurnStore). Every query takes
 * the organization, and the user where a user owns what it reads; an anonymous conversation
 * (user_id null) matches none.
 */
@Injectable()
export class ChatHistoryRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * One page of a user's conversations, most recently updated first, strictly after `after` in
   * that order. Served by the (organization_id, user_id, updated_at) index, read backwards.
   */
  async listForUser(
    organizationId: string,
    userId: string,
    assistantId: string | null,
    after: ConversationCursor | null,
    limit: number,
  ): Promise<StoredConversation[]> {
    const rows = await this.dataSource.query<ConversationRow[]>(
      `SELECT id, assistant_id, title, created_at, updated_at,
              to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS updated_at_key
         FROM conversations
        WHERE organization_id = $1 AND user_id = $2
          AND ($3::uuid IS NULL OR assistant_id = $3::uuid)
          AND ${CONVERSATION_ORDER.after(4)}
        ORDER BY ${CONVERSATION_ORDER.orderBy}
        LIMIT $6`,
      [organizationId, userId, assistantId, after?.updatedAt ?? null, after?.id ?? null, limit],
    );
    return rows.map((row) => ({
      id: row.id,
      assistantId: row.assistant_id,
      title: row.title,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      cursor: { updatedAt: row.updated_at_key, id: row.id },
    }));
  }

  /** The conversation if this organization's user owns it; null for anyone else's, as for none. */
  async findForUser(
    organizationId: string,
    userId: string,
    conversationId: string,
  ): Promise<{ id: string; lastResponseId: string | null } | null> {
    const [row] = await this.dataSource.query<{ id: string; last_response_id: string | null }[]>(
      `SELECT id, last_response_id FROM conversations
        WHERE id = $1 AND organization_id = $2 AND user_id = $3`,
      [conversationId, organizationId, userId],
    );
    return row ? { id: row.id, lastResponseId: row.last_response_id } : null;
  }

  /**
   * One page of the chat-history messages of the branch ending at `lastResponseId`, oldest first:
   * walks `previous_response_id` from that turn back (stopping at the cursor's turn, so later
   * pages walk less) and orders by turn depth, then position within the turn. Messages of other
   * branches are never reached, so two branches never interleave.
   */
  async listBranchMessages(
    organizationId: string,
    conversationId: string,
    lastResponseId: string,
    after: MessageCursor | null,
    limit: number,
  ): Promise<StoredMessage[]> {
    const rows = await this.dataSource.query<MessageRow[]>(
      `WITH RECURSIVE branch AS (
         SELECT id, previous_response_id, depth
           FROM responses
          WHERE id = $3 AND organization_id = $1 AND conversation_id = $2
         UNION ALL
         SELECT r.id, r.previous_response_id, r.depth
           FROM responses r JOIN branch b ON r.id = b.previous_response_id
          WHERE r.organization_id = $1 AND r.conversation_id = $2 AND r.depth >= $4::integer
       )
       SELECT m.id, m.role, m.content, m.created_at, b.depth, m.position
         FROM branch b
         JOIN messages m ON m.response_id = b.id AND m.conversation_id = $2 AND m.organization_id = $1
        WHERE ${MESSAGE_ORDER.after(4)}
        ORDER BY ${MESSAGE_ORDER.orderBy}
        LIMIT $6`,
      [organizationId, conversationId, lastResponseId, after?.depth ?? 0, after?.position ?? null, limit],
    );
    return rows.map((row) => ({
      id: row.id,
      role: row.role,
      content: row.content,
      createdAt: row.created_at,
      cursor: { depth: row.depth, position: row.position },
    }));
  }
}
