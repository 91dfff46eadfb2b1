import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { TransactionalConnection } from '../../database/transactional-connection.js';
import type { ChatMessage } from '../../llm/llm.types.js';
import type { BranchTurn, StoredInputItem, TurnWithoutItem } from '../conversation-items.js';
import type { ThreadHead } from '../../turns/turn.types.js';
import { threadHead, threadWalk, type ChainRow } from './turn-sql.js';
import { BRANCH_TURNS, branchTurn, type BranchRow } from './stored-turn-rows.js';

/** A conversation as the Conversations API sees it. */
export interface StoredConversationRecord {
  id: string;
  assistantId: string | null;
  title: string;
  lastResponseId: string | null;
  metadata: Record<string, string>;
  createdAt: Date;
}

/** Items added through the API, stored as one turn without a model call. */
export interface ItemsTurn {
  items: StoredInputItem[];
  transcript: ChatMessage[];
  messages: { role: 'user' | 'assistant'; content: string; position: number }[];
  /** The title a still untitled conversation takes (its first user text), or ''. */
  title: string;
}

/** The columns of a StoredConversationRecord, named as its fields: every statement reads them as is. */
const CONVERSATION_COLUMNS = `id, assistant_id AS "assistantId", title, last_response_id AS "lastResponseId", metadata,
       created_at AS "createdAt"`;

/**
 * The Conversations API's queries on the turn store's tables (this store and TurnStore are their
 * only writers). Ownership is that of chat history: the organization, and the end user
 * (`x-user-id`; none for an anonymous conversation, which only anonymous callers reach), in every
 * query, so anyone else's conversation is as absent as a missing one.
 */
@Injectable()
export class ConversationStore {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly connection: TransactionalConnection,
  ) {}

  withTransaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.connection.withTransaction(work);
  }

  private manager(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  async create(
    manager: EntityManager,
    organizationId: string,
    userId: string | null,
    metadata: Record<string, string>,
    createdAt: Date,
  ): Promise<StoredConversationRecord> {
    const [row] = await manager.query<StoredConversationRecord[]>(
      `INSERT INTO conversations (id, organization_id, assistant_id, user_id, title, last_response_id, metadata, created_at, updated_at)
       VALUES ($1, $2, NULL, $3, '', NULL, $4::jsonb, $5, $5)
       RETURNING ${CONVERSATION_COLUMNS}`,
      [randomUUID(), organizationId, userId, JSON.stringify(metadata), createdAt],
    );
    return row;
  }

  /** `lock` holds the row until the caller's transaction ends, so appends never interleave. */
  async find(
    organizationId: string,
    userId: string | null,
    conversationId: string,
    options: { manager?: EntityManager; lock?: boolean } = {},
  ): Promise<StoredConversationRecord | null> {
    const [row] = await this.manager(options.manager).query<StoredConversationRecord[]>(
      `SELECT ${CONVERSATION_COLUMNS} FROM conversations
        WHERE id = $1 AND organization_id = $2 AND user_id IS NOT DISTINCT FROM $3::varchar
        ${options.lock ? 'FOR UPDATE' : ''}`,
      [conversationId, organizationId, userId],
    );
    return row ?? null;
  }

  async updateMetadata(
    organizationId: string,
    userId: string | null,
    conversationId: string,
    metadata: Record<string, string>,
  ): Promise<StoredConversationRecord | null> {
    const [rows] = await this.manager().query<[StoredConversationRecord[], number]>(
      `UPDATE conversations SET metadata = $4::jsonb
        WHERE id = $1 AND organization_id = $2 AND user_id IS NOT DISTINCT FROM $3::varchar
       RETURNING ${CONVERSATION_COLUMNS}`,
      [conversationId, organizationId, userId, JSON.stringify(metadata)],
    );
    return rows[0] ?? null;
  }

  /** The conversation with its turns and chat-history messages (triggers of migrations 1796670000201 and 1796530000001). */
  async delete(organizationId: string, userId: string | null, conversationId: string): Promise<boolean> {
    const [, count] = await this.manager().query<[unknown[], number]>(
      `DELETE FROM conversations
        WHERE id = $1 AND organization_id = $2 AND user_id IS NOT DISTINCT FROM $3::varchar`,
      [conversationId, organizationId, userId],
    );
    return count > 0;
  }

  /**
   * Appends items as a turn (whose id it returns) after the conversation's newest one (locked by the caller), with
   * their chat-history messages, and makes it the newest. The row keeps the active specialist
   * of the turn before it, so the next turn starts where the thread was.
   */
  async appendItems(
    manager: EntityManager,
    organizationId: string,
    userId: string | null,
    conversation: StoredConversationRecord,
    turn: ItemsTurn,
    now: Date,
  ): Promise<string> {
    const turnId = randomUUID();
    await manager.query(
      `INSERT INTO responses (id, organization_id, assistant_id, conversation_id, previous_response_id, user_id, status,
                              depth, active_agent, instructions, input, output, output_text, transcript, usage, error,
                              created_at, completed_at)
       SELECT $1::uuid, $2::uuid, NULL, $3::uuid, $4::uuid, $5::varchar, 'completed',
              COALESCE(previous.depth, 0) + 1, previous.active_agent, NULL, $6::jsonb, '[]'::jsonb, '', $7::jsonb,
              NULL, NULL, $8::timestamptz, $8::timestamptz
         FROM (SELECT 1) AS one
         LEFT JOIN responses previous ON previous.id = $4::uuid AND previous.organization_id = $2::uuid`,
      [
        turnId,
        organizationId,
        conversation.id,
        conversation.lastResponseId,
        userId,
        JSON.stringify(turn.items),
        JSON.stringify(turn.transcript),
        now,
      ],
    );
    await manager.query(
      `INSERT INTO messages (id, organization_id, conversation_id, response_id, user_id, role, content, position, created_at)
       SELECT m.id, $1::uuid, $2::uuid, $3::uuid, $4::varchar, m.role, m.content, m.position, $5::timestamptz
         FROM jsonb_to_recordset($6::jsonb) AS m(id uuid, role varchar, content text, position smallint)`,
      [
        organizationId,
        conversation.id,
        turnId,
        userId,
        now,
        JSON.stringify(turn.messages.map((message) => ({ ...message, id: randomUUID() }))),
      ],
    );
    await manager.query(
      `UPDATE conversations
          SET last_response_id = $3, last_response_created_at = $4, updated_at = $4,
              title = CASE WHEN title = '' THEN $5 ELSE title END
        WHERE id = $1 AND organization_id = $2`,
      [conversation.id, organizationId, turnId, now, turn.title],
    );
    return turnId;
  }

  /** The turns of the branch ending at `lastResponseId`, oldest first. */
  async branchTurns(
    organizationId: string,
    conversationId: string,
    lastResponseId: string,
    manager?: EntityManager,
  ): Promise<BranchTurn[]> {
    const rows = await this.manager(manager).query<BranchRow[]>(BRANCH_TURNS, [
      organizationId,
      conversationId,
      lastResponseId,
    ]);
    return rows.map(branchTurn);
  }

  /** Rewrites one turn without a deleted item, and its chat-history message, in the caller's transaction. */
  async rewriteTurn(
    manager: EntityManager,
    organizationId: string,
    conversationId: string,
    turnId: string,
    rewritten: TurnWithoutItem,
  ): Promise<void> {
    await manager.query(
      `UPDATE responses SET input = $3::jsonb, output = $4::jsonb, transcript = $5::jsonb, output_text = $6
        WHERE id = $1 AND organization_id = $2`,
      [
        turnId,
        organizationId,
        JSON.stringify(rewritten.input),
        JSON.stringify(rewritten.output),
        JSON.stringify(rewritten.transcript),
        rewritten.outputText,
      ],
    );
    if (!rewritten.message) return;
    const { role, content, replacement } = rewritten.message;
    // By conversation and response: the index of `messages`.
    const target = `SELECT id FROM messages
                     WHERE conversation_id = $5 AND response_id = $1 AND organization_id = $2 AND role = $3
                       AND content = $4
                     ORDER BY position LIMIT 1`;
    await manager.query(
      replacement === null
        ? `DELETE FROM messages WHERE id = (${target})`
        : `UPDATE messages SET content = $6 WHERE id = (${target})`,
      [turnId, organizationId, role, content, conversationId, ...(replacement === null ? [] : [replacement])],
    );
  }

  /**
   * What a turn continuing the conversation starts from: the thread ending at its newest turn
   * (null for a conversation with no turn yet), exactly as `previous_response_id` would load it.
   */
  async loadThread(
    organizationId: string,
    userId: string | null,
    conversationId: string,
  ): Promise<{ conversation: StoredConversationRecord; head: ThreadHead | null } | null> {
    const conversation = await this.find(organizationId, userId, conversationId);
    if (!conversation) return null;
    if (conversation.lastResponseId === null) return { conversation, head: null };
    // The same walk as TurnStore.loadThread, from the conversation's newest turn.
    const rows = await this.manager().query<ChainRow[]>(
      threadWalk('id = $1 AND organization_id = $2 AND conversation_id = $3', '$2'),
      [conversation.lastResponseId, organizationId, conversation.id],
    );
    return { conversation, head: threadHead(rows) };
  }
}
