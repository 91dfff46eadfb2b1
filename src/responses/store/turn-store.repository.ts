import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { inSpan } from '../../common/tracing/tracing.js';
import { preparedQuery } from '../../database/prepared-query.js';
import { ADD_TO_HOURLY_ROW, ADD_TO_USAGE_ROW, USAGE_COUNTS } from '../../usage/usage-rollup-sql.js';
import {
  conversationCte,
  insertMessages,
  messagesParam,
  namedStatement,
  threadHead,
  TURN_ROW_COLUMNS,
  TURN_ROW_KEYS,
  turnRowSelect,
  turnRowValues,
  type ChainRow,
  LOAD_THREAD,
} from './turn-sql.js';
import type { TurnStatus } from '../../turns/turn.types.js';
import type { OutputItem } from '../../turns/output-item.types.js';
import type { ThreadHead, TurnRecord } from '../../turns/turn.types.js';

export interface StoredResponse {
  id: string;
  assistantId: string;
  conversationId: string;
  previousResponseId: string | null;
  status: TurnStatus;
  instructions: string | null;
  output: OutputItem[];
  outputText: string;
  usage: Record<string, number> | null;
  error: { type: string; code: string; message: string } | null;
  createdAt: Date;
  /** Null while the turn runs. */
  completedAt: Date | null;
  /** The stored Response object; null for responses stored before it was kept. */
  body: unknown;
  background: boolean;
}

const TURN_END_KEYS = [
  ...TURN_ROW_KEYS,
  'output',
  'outputText',
  'transcript',
  'usage',
  'error',
  'messages',
  'body',
  'apiKeyId',
  'usageRows',
  'upstreamAttempts',
] as const;

type TurnEndParams = Record<(typeof TURN_END_KEYS)[number], string>;

/** The finished response's row, after the CTE `conversation`: every column but the start's lease. */
function insertResponse(p: TurnEndParams): string {
  return `INSERT INTO responses (${TURN_ROW_COLUMNS}, output, output_text, transcript,
                           usage, error, created_at, completed_at, body, upstream_attempts)
    SELECT ${turnRowSelect(p)}, ${p.output}::jsonb, ${p.outputText}::text, ${p.transcript}::jsonb, ${p.usage}::jsonb, ${p.error}::jsonb, ${p.createdAt}::timestamptz, ${p.updatedAt}::timestamptz, ${p.body}::json,
           ${p.upstreamAttempts}::jsonb
      FROM conversation`;
}

/**
 * The turn's usage, left pending for the flush into the rollups (UsageFlusher): a narrow row of
 * its own, so that concurrent turns of a tenant no longer upsert, and wait on, one shared rollup row.
 */
function pendingUsage(p: TurnEndParams): string {
  return `pending_usage AS (
    INSERT INTO usage_pending (response_id, organization_id, completed_at, assistant_id, specialist, api_key_id,
                               user_id, usage_rows)
    SELECT response.id, ${p.organizationId}::uuid, ${p.updatedAt}::timestamptz, ${p.assistantId}::uuid,
           coalesce(${p.activeAgent}::varchar, ''), ${p.apiKeyId}::uuid, coalesce(${p.userId}::varchar, ''),
           ${p.usageRows}::jsonb
      FROM response WHERE ${p.usageRows}::jsonb IS NOT NULL
  )`;
}

/**
 * A finished turn whose start was recorded (or tried): conversation, response (completing the
 * start's row), chat-history messages and its pending usage.
 */
const SAVE_TURN = namedStatement(
  'turn_save',
  TURN_END_KEYS,
  (p) => `WITH ${conversationCte(p)}, response AS (
    ${insertResponse(p)}
    -- The row written when the turn started is completed, unless the turn was cancelled or
    -- swept meanwhile: then it stays as it is, and so do its messages.
    ON CONFLICT (id) DO UPDATE
       SET status = EXCLUDED.status, active_agent = EXCLUDED.active_agent, output = EXCLUDED.output,
           output_text = EXCLUDED.output_text, transcript = EXCLUDED.transcript, usage = EXCLUDED.usage,
           error = EXCLUDED.error, completed_at = EXCLUDED.completed_at, body = EXCLUDED.body,
           upstream_attempts = EXCLUDED.upstream_attempts, lease_expires_at = NULL
     WHERE responses.status IN ('queued', 'in_progress') AND responses.organization_id = EXCLUDED.organization_id
    RETURNING id, conversation_id
  ), ${pendingUsage(p)}
  ${insertMessages(p)}`,
);

/** The new conversation of a turn that starts one: nothing can exist under its fresh id. */
function newConversationCte(p: TurnEndParams): string {
  return `conversation AS (
  INSERT INTO conversations (id, organization_id, assistant_id, user_id, title, last_response_id, created_at, updated_at)
  VALUES (${p.conversationId}::uuid, ${p.organizationId}::uuid, ${p.assistantId}::uuid, ${p.userId}::varchar, ${p.newConversationTitle}::varchar, ${p.responseId}::uuid, ${p.createdAt}::timestamptz, ${p.updatedAt}::timestamptz)
  RETURNING id
)`;
}

/**
 * A whole turn with no start row (a foreground JSON turn: nothing of it is observable before its
 * reply, docs/architecture.md), in one statement of plain INSERTs: no row exists under its
 * response id, so no ON CONFLICT on `responses`; its conversation is inserted too when the turn
 * starts it (else moved on, as by every turn).
 */
const insertTurn = (name: string, conversation: (p: TurnEndParams) => string) =>
  namedStatement(
    name,
    TURN_END_KEYS,
    (p) => `WITH ${conversation(p)}, response AS (
    ${insertResponse(p)}
    RETURNING id, conversation_id
  ), ${pendingUsage(p)}
  ${insertMessages(p)}`,
  );
const INSERT_TURN_NEW = insertTurn('turn_insert_new', newConversationCte);
const INSERT_TURN = insertTurn('turn_insert', conversationCte);

/** The usage rows parameter: the columns of the rollups, as the flush reads them (usage_pending.usage_rows). */
function usageRowsParam(rows: TurnRecord['usageRows']): string {
  return JSON.stringify(
    rows.map((row) => ({
      model: row.model ?? '',
      currency: row.currency,
      turns: row.turns,
      input_tokens: row.inputTokens,
      cached_tokens: row.cachedTokens,
      output_tokens: row.outputTokens,
      reasoning_tokens: row.reasoningTokens,
      cost: row.cost,
    })),
  );
}

/** How many rows of each table an erasure deleted. */
export interface ErasedHistory {
  conversations: number;
  responses: number;
  messages: number;
}

/**
 * The turn store: the only writer of the responses, conversations and messages tables (chat
 * history reads them through ChatHistoryRepository, beside this file). Hand-written SQL for the
 * two statements on every turn's path, one read of the thread and one write of the result, and
 * for the erase-user deletes. The tenant (organization, assistant, user) is part of each query.
 */
const SAVE_TURN_SPAN = { 'db.system.name': 'postgresql', 'db.operation.name': 'INSERT' };

@Injectable()
export class TurnStore {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Walks the `previous_response_id` chain from `responseId` to the first turn. The first row must
   * belong to this organization, assistant and user (an anonymous turn continues only anonymously).
   */
  async loadThread(
    organizationId: string,
    assistantId: string,
    userId: string | null,
    responseId: string,
  ): Promise<ThreadHead | null> {
    const rows = await preparedQuery<ChainRow>(this.dataSource, LOAD_THREAD, [
      responseId,
      organizationId,
      assistantId,
      userId,
    ]);
    // Only the row the walk started from (the newest) carries its conversation.
    const conversationId = rows.find((row) => row.conversation_id !== null)?.conversation_id;
    return conversationId ? threadHead(rows, conversationId) : null;
  }

  /**
   * The input items a response was created with, as stored; null when the response is not this
   * organization's, or not this end user's (the same rule as continuing a thread).
   */
  async findInput(
    organizationId: string,
    userId: string | null,
    responseId: string,
  ): Promise<unknown[] | null> {
    const [row] = await this.dataSource.query<{ input: unknown[] }[]>(
      `SELECT input FROM responses
        WHERE id = $1 AND organization_id = $2 AND user_id IS NOT DISTINCT FROM $3::varchar`,
      [responseId, organizationId, userId],
    );
    return row ? row.input : null;
  }

  /**
   * Deletes one response of this organization and end user in one statement: its chat-history
   * messages go with it (foreign key), its conversation then shows the branch up to the turn
   * before it, and a conversation left without responses is deleted. False when there was none.
   */
  async deleteResponse(organizationId: string, userId: string | null, responseId: string): Promise<boolean> {
    const [row] = await this.dataSource.query<{ deleted: number }[]>(
      `WITH deleted AS (
         DELETE FROM responses
          WHERE id = $1 AND organization_id = $2 AND user_id IS NOT DISTINCT FROM $3::varchar
         RETURNING id, conversation_id, previous_response_id
       ), emptied AS (
         DELETE FROM conversations c USING deleted d
          WHERE c.id = d.conversation_id AND c.organization_id = $2
            AND NOT EXISTS (SELECT 1 FROM responses r WHERE r.conversation_id = c.id AND r.id <> d.id)
         RETURNING c.id
       ), moved AS (
         UPDATE conversations c SET last_response_id = d.previous_response_id
           FROM deleted d
          WHERE c.id = d.conversation_id AND c.organization_id = $2 AND c.last_response_id = d.id
            AND c.id NOT IN (SELECT id FROM emptied)
         RETURNING c.id
       )
       SELECT (SELECT count(*)::integer FROM deleted) AS deleted`,
      [responseId, organizationId, userId],
    );
    return row.deleted > 0;
  }

  /**
   * Stores a finished turn atomically in one statement: the conversation (created, or touched),
   * the response (completing the row its start wrote, if any), its chat-history messages and its
   * pending usage.
   */
  saveTurn(turn: TurnRecord): Promise<void> {
    return inSpan('save turn', SAVE_TURN_SPAN, () => this.writeTurn(SAVE_TURN, turn));
  }

  /**
   * Stores a whole turn that wrote no start row (a foreground JSON turn), in one statement of
   * INSERTs: the conversation when the turn starts it, the response, all its messages, its usage.
   */
  insertTurn(turn: TurnRecord): Promise<void> {
    const statement = turn.newConversation ? INSERT_TURN_NEW : INSERT_TURN;
    return inSpan('save turn', SAVE_TURN_SPAN, () => this.writeTurn(statement, turn));
  }

  private async writeTurn(statement: typeof SAVE_TURN, turn: TurnRecord): Promise<void> {
    await preparedQuery(
      this.dataSource,
      statement,
      statement.bind({
        ...turnRowValues(turn, turn.completedAt),
        output: JSON.stringify(turn.output),
        outputText: turn.outputText,
        transcript: JSON.stringify(turn.transcript),
        usage: turn.usage === null ? null : JSON.stringify(turn.usage),
        error: turn.error === null ? null : JSON.stringify(turn.error),
        messages: messagesParam(turn.messages),
        body: turn.body,
        apiKeyId: turn.apiKeyId,
        usageRows: turn.usageRows.length === 0 ? null : usageRowsParam(turn.usageRows),
        upstreamAttempts: turn.upstreamAttempts?.length ? JSON.stringify(turn.upstreamAttempts) : null,
      }),
    );
  }

  /**
   * A response of this organization and end user (an anonymous one only for anonymous callers);
   * items appended through the Conversations API (no assistant) are none.
   */
  async findResponse(
    organizationId: string,
    userId: string | null,
    responseId: string,
  ): Promise<StoredResponse | null> {
    const rows: Record<string, unknown>[] = await this.dataSource.query(
      `SELECT id, assistant_id, conversation_id, previous_response_id, status, instructions, output, output_text,
              usage, error, created_at, completed_at, body, background
         FROM responses
        WHERE id = $1 AND organization_id = $2 AND user_id IS NOT DISTINCT FROM $3::varchar
          AND assistant_id IS NOT NULL`,
      [responseId, organizationId, userId],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      id: row.id as string,
      assistantId: row.assistant_id as string,
      conversationId: row.conversation_id as string,
      previousResponseId: row.previous_response_id as string | null,
      status: row.status as TurnStatus,
      instructions: row.instructions as string | null,
      output: row.output as OutputItem[],
      outputText: row.output_text as string,
      usage: row.usage as Record<string, number> | null,
      error: row.error as StoredResponse['error'],
      createdAt: row.created_at as Date,
      completedAt: row.completed_at as Date | null,
      body: row.body,
      background: row.background as boolean,
    };
  }

  /**
   * Every conversation, response and chat-history message of one user of one organization,
   * inside the caller's erase transaction. Children go first so each count is exact (the foreign
   * keys would cascade anyway). Responses and messages are also matched by their own user_id,
   * although every turn lives in its user's conversation: nothing of the user may survive.
   */
  async eraseUserHistory(
    manager: EntityManager,
    organizationId: string,
    userId: string,
  ): Promise<ErasedHistory> {
    const count = async (sql: string): Promise<number> => {
      const [row] = await manager.query<{ count: number }[]>(
        `WITH deleted AS (${sql} RETURNING 1) SELECT count(*)::integer AS count FROM deleted`,
        [organizationId, userId],
      );
      return row.count;
    };
    const owned = 'SELECT id FROM conversations WHERE organization_id = $1 AND user_id = $2';
    const messages = await count(
      `DELETE FROM messages
        WHERE organization_id = $1 AND (conversation_id IN (${owned}) OR user_id = $2)`,
    );
    const responses = await count(
      `DELETE FROM responses
        WHERE organization_id = $1 AND (conversation_id IN (${owned}) OR user_id = $2)`,
    );
    const conversations = await count(
      'DELETE FROM conversations WHERE organization_id = $1 AND user_id = $2',
    );
    // The organization's usage keeps its totals: the user's rows are folded into the anonymous ones,
    // and so is their usage not yet flushed (a flush after this adds it as anonymous).
    await manager.query(`UPDATE usage_pending SET user_id = '' WHERE organization_id = $1 AND user_id = $2`, [
      organizationId,
      userId,
    ]);
    await manager.query(
      `WITH moved AS (DELETE FROM usage_daily WHERE organization_id = $1 AND user_id = $2 RETURNING *)
       INSERT INTO usage_daily AS d (organization_id, day, assistant_id, specialist, api_key_id, user_id, currency,
                                     ${USAGE_COUNTS})
       SELECT organization_id, day, assistant_id, specialist, api_key_id, '', currency, ${USAGE_COUNTS}
         FROM moved
       ${ADD_TO_USAGE_ROW}`,
      [organizationId, userId],
    );
    await manager.query(
      `WITH moved AS (DELETE FROM usage_hourly WHERE organization_id = $1 AND user_id = $2 RETURNING *)
       INSERT INTO usage_hourly AS d (organization_id, hour, assistant_id, specialist, api_key_id, user_id, model,
                                      currency, ${USAGE_COUNTS})
       SELECT organization_id, hour, assistant_id, specialist, api_key_id, '', model, currency, ${USAGE_COUNTS}
         FROM moved
       ${ADD_TO_HOURLY_ROW}`,
      [organizationId, userId],
    );
    return { conversations, responses, messages };
  }
}
