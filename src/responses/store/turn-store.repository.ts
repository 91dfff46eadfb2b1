import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { ChatMessage, UpstreamAttempt } from '../../llm/llm.types.js';
import type { StoredResponseStatus } from '../entities/response.entity.js';
import type { OutputItem } from '../streaming/response-recorder.js';
import { inSpan } from '../../common/tracing/tracing.js';
import { preparedQuery, type PreparedStatement } from '../../database/prepared-query.js';
import { CONVERSATION_CTE, conversationParams, insertMessages, messagesParam } from './turn-sql.js';

/** The end of the branch a new turn continues, with the whole model transcript before it. */
export interface ThreadHead {
  responseId: string;
  conversationId: string;
  depth: number;
  status: StoredResponseStatus;
  output: OutputItem[];
  activeAgent: string | null;
  transcript: ChatMessage[];
  /** False when a response of the chain was deleted: the thread cannot be rebuilt whole. */
  complete: boolean;
}

/** Everything one finished turn writes, in a single statement. */
export interface TurnRecord {
  responseId: string;
  organizationId: string;
  assistantId: string;
  conversationId: string;
  /** Set only when this turn starts the conversation. */
  newConversationTitle: string | null;
  previousResponseId: string | null;
  userId: string | null;
  status: StoredResponseStatus;
  depth: number;
  activeAgent: string | null;
  instructions: string | null;
  input: unknown[];
  output: OutputItem[];
  outputText: string;
  transcript: ChatMessage[];
  usage: object | null;
  error: { type: string; code: string; message: string } | null;
  createdAt: Date;
  completedAt: Date;
  /** The Response object exactly as the client was sent it, for GET (JSON text, key order kept). */
  body: string | null;
  /** The API key that asked, for the usage rollup. */
  apiKeyId: string;
  /** The upstream targets the turn's model calls tried (none for the offline model). */
  upstreamAttempts?: UpstreamAttempt[];
  /**
   * The turn's tokens by currency of the models' prices (`''`: unpriced), upserted into the
   * day's usage rollup; the first row counts the turn. Empty when the upstream reported nothing.
   */
  usageRows: TurnUsageRow[];
  /** Chat-history messages: the user's text, and the reply unless the turn failed. */
  messages: { id: string; role: 'user' | 'assistant'; content: string; position: number; createdAt: Date }[];
}

export interface TurnUsageRow {
  currency: string;
  turns: number;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  cost: number;
}

export interface StoredResponse {
  id: string;
  assistantId: string;
  conversationId: string;
  previousResponseId: string | null;
  status: StoredResponseStatus;
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

interface ChainRow {
  id: string;
  conversation_id: string;
  depth: number;
  status: StoredResponseStatus;
  output: OutputItem[] | null;
  active_agent: string | null;
  transcript: ChatMessage[];
}

/** Adds a row's counts to the usage rollup row of the same day and dimensions (`usage_daily AS d`). */
const ADD_TO_USAGE_ROW = `ON CONFLICT (organization_id, day, assistant_id, specialist, api_key_id, user_id, currency) DO UPDATE
  SET turns = d.turns + EXCLUDED.turns,
      input_tokens = d.input_tokens + EXCLUDED.input_tokens,
      cached_tokens = d.cached_tokens + EXCLUDED.cached_tokens,
      output_tokens = d.output_tokens + EXCLUDED.output_tokens,
      reasoning_tokens = d.reasoning_tokens + EXCLUDED.reasoning_tokens,
      cost = d.cost + EXCLUDED.cost`;

/** A finished turn: conversation, response, chat-history messages and the day's usage rollup. */
const SAVE_TURN: PreparedStatement = {
  name: 'turn_save',
  text: `WITH ${CONVERSATION_CTE}, response AS (
    INSERT INTO responses (id, organization_id, assistant_id, conversation_id, previous_response_id, user_id,
                           status, depth, active_agent, instructions, input, output, output_text, transcript,
                           usage, error, created_at, completed_at, body, upstream_attempts)
    SELECT $6::uuid, $2::uuid, $3::uuid, conversation.id, $9::uuid, $4::varchar, $10::varchar, $11::int, $12::varchar,
           $13::text, $14::jsonb, $15::jsonb, $16::text, $17::jsonb, $18::jsonb, $19::jsonb, $7::timestamptz, $8::timestamptz, $21::json,
           $24::jsonb
      FROM conversation
    -- The row written when the turn started is completed, unless the turn was cancelled or
    -- swept meanwhile: then it stays as it is, and so do its messages.
    ON CONFLICT (id) DO UPDATE
       SET status = EXCLUDED.status, active_agent = EXCLUDED.active_agent, output = EXCLUDED.output,
           output_text = EXCLUDED.output_text, transcript = EXCLUDED.transcript, usage = EXCLUDED.usage,
           error = EXCLUDED.error, completed_at = EXCLUDED.completed_at, body = EXCLUDED.body,
           upstream_attempts = EXCLUDED.upstream_attempts, lease_expires_at = NULL
     WHERE responses.status IN ('queued', 'in_progress') AND responses.organization_id = EXCLUDED.organization_id
    RETURNING id, conversation_id
  ), usage_rollup AS (
    -- The day's usage per dimension, in the same statement: no round trip of its own.
    INSERT INTO usage_daily AS d (organization_id, day, assistant_id, specialist, api_key_id, user_id, currency,
                                  turns, input_tokens, cached_tokens, output_tokens, reasoning_tokens, cost)
    SELECT $2::uuid, ($8::timestamptz AT TIME ZONE 'UTC')::date, $3::uuid, coalesce($12::varchar, ''),
           $22::uuid, coalesce($4::varchar, ''), u.currency, u.turns, u.input_tokens, u.cached_tokens,
           u.output_tokens, u.reasoning_tokens, u.cost
      FROM response, jsonb_to_recordset($23::jsonb) AS u(currency varchar, turns bigint, input_tokens bigint,
           cached_tokens bigint, output_tokens bigint, reasoning_tokens bigint, cost numeric)
    ${ADD_TO_USAGE_ROW}
  )
  ${insertMessages(20)}`,
};

/** The chain of a thread from its newest response back to its first (tenant checked on every row). */
const LOAD_THREAD = `WITH RECURSIVE chain AS (
    SELECT id, previous_response_id, conversation_id, depth, status, output, active_agent::varchar, transcript
      FROM responses
     WHERE id = $1 AND organization_id = $2 AND assistant_id = $3 AND user_id IS NOT DISTINCT FROM $4::varchar
    UNION ALL
    SELECT r.id, r.previous_response_id, r.conversation_id, r.depth, r.status, NULL::jsonb, NULL::varchar, r.transcript
      FROM responses r JOIN chain c ON r.id = c.previous_response_id
     WHERE r.organization_id = $2
  )
  SELECT id, conversation_id, depth, status, output, active_agent, transcript FROM chain ORDER BY depth`;

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
    // Not prepared: a generic plan of this recursive walk cost 2.4x the CPU per turn on a
    // 200-turn thread (bench `threads`, embedded database), where the planned-per-call one stays flat.
    const rows: ChainRow[] = await this.dataSource.query(LOAD_THREAD, [
      responseId,
      organizationId,
      assistantId,
      userId,
    ]);
    const head = rows[rows.length - 1];
    if (!head) return null;
    return {
      responseId: head.id,
      conversationId: head.conversation_id,
      depth: head.depth,
      status: head.status,
      output: head.output ?? [],
      activeAgent: head.active_agent,
      transcript: rows.flatMap((row) => row.transcript),
      // The walk reaches depth 1 unless a turn on the way was deleted (DELETE /v1/responses/{id}).
      complete: rows[0].depth === 1,
    };
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
   * the response (completing the row its start wrote, if any), its chat-history messages and the
   * day's usage rollup.
   */
  saveTurn(turn: TurnRecord): Promise<void> {
    return inSpan('save turn', SAVE_TURN_SPAN, () => this.writeTurn(turn));
  }

  private async writeTurn(turn: TurnRecord): Promise<void> {
    await preparedQuery(this.dataSource, SAVE_TURN, [
      ...conversationParams(turn, turn.completedAt),
      turn.previousResponseId,
      turn.status,
      turn.depth,
      turn.activeAgent,
      turn.instructions,
      JSON.stringify(turn.input),
      JSON.stringify(turn.output),
      turn.outputText,
      JSON.stringify(turn.transcript),
      turn.usage === null ? null : JSON.stringify(turn.usage),
      turn.error === null ? null : JSON.stringify(turn.error),
      messagesParam(turn.messages),
      turn.body,
      turn.apiKeyId,
      JSON.stringify(
        turn.usageRows.map((row) => ({
          currency: row.currency,
          turns: row.turns,
          input_tokens: row.inputTokens,
          cached_tokens: row.cachedTokens,
          output_tokens: row.outputTokens,
          reasoning_tokens: row.reasoningTokens,
          cost: row.cost,
        })),
      ),
      turn.upstreamAttempts?.length ? JSON.stringify(turn.upstreamAttempts) : null,
    ]);
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
      status: row.status as StoredResponseStatus,
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
    // The organization's usage keeps its totals: the user's rows are folded into the anonymous ones.
    await manager.query(
      `WITH moved AS (DELETE FROM usage_daily WHERE organization_id = $1 AND user_id = $2 RETURNING *)
       INSERT INTO usage_daily AS d (organization_id, day, assistant_id, specialist, api_key_id, user_id, currency,
                                     turns, input_tokens, cached_tokens, output_tokens, reasoning_tokens, cost)
       SELECT organization_id, day, assistant_id, specialist, api_key_id, '', currency, turns, input_tokens,
              cached_tokens, output_tokens, reasoning_tokens, cost
         FROM moved
       ${ADD_TO_USAGE_ROW}`,
      [organizationId, userId],
    );
    return { conversations, responses, messages };
  }
}
