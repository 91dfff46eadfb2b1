import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { inSpan } from '../../common/tracing/tracing.js';
import { isDatabaseUnavailable } from '../../common/errors/database-outage.js';
import { preparedQuery } from '../../database/prepared-query.js';
import { isUniqueViolation } from '../../database/sql-errors.js';
import { FOLD_USER_USAGE } from '../../usage/usage-rollup-sql.js';
import { eventBatchValues } from './event-batch-sql.js';
import { INSERT_TURN, INSERT_TURN_NEW, SAVE_TURN, SAVE_TURN_EVENTS, turnEndValues } from './turn-end-sql.js';
import { COMPLETE_TURN, COMPLETE_TURN_EVENTS, completeValues } from './turn-complete-sql.js';
import { SETTLE_TURN, SETTLE_TURN_EVENTS } from './turn-settle-sql.js';
import type { StoredEvent } from './turn-ledger.repository.js';
import {
  responseRowWritten,
  threadHead,
  type ChainRow,
  type NamedStatement,
  LOAD_THREAD,
} from './turn-sql.js';
import { FIND_RESPONSE, storedResponse, type StoredResponse } from './stored-turn-rows.js';
import { DELETE_RESPONSE, LOCK_RESPONSE_CONVERSATION } from './response-delete-sql.js';
import { TurnInsertGroups } from './turn-insert-groups.js';
import { writeTurnGroup } from './turn-insert-groups-sql.js';
import type { ThreadHead, TurnRecord } from '../../turns/turn.types.js';

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
const COMPLETE_TURN_SPAN = { 'db.system.name': 'postgresql', 'db.operation.name': 'UPDATE' };

@Injectable()
export class TurnStore {
  /** Foreground JSON turns' final writes, committed in groups (turn-insert-groups.ts). */
  private readonly insertGroups = new TurnInsertGroups({
    writeGroup: (turns, rows) => writeTurnGroup(this.dataSource, turns, rows),
    writeOne: (turn) => this.insertOneTurn(turn),
    written: (turn) => responseRowWritten(this.dataSource, turn, 'status', turn.status),
  });

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
    return threadHead(rows);
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
   * Deletes one response of this organization and end user: its chat-history messages go with it
   * (a trigger on responses, migration 1796530000001), its conversation then shows the branch up
   * to the turn before it, and a conversation left without responses is deleted (with whatever
   * else it holds, by the trigger of migration 1796670000201). False when there was none.
   * One transaction of two statements: the conversation's row is locked first, as every writer of
   * a response locks it before writing one (start records, final writes, appended items); the
   * deletion then decides emptiness in a snapshot taken under that lock. In one statement, a
   * turn's response committed after its snapshot was invisible to the emptiness test (EvalPlanQual
   * re-reads the locked row only), and the trigger deleted it with the conversation.
   */
  async deleteResponse(organizationId: string, userId: string | null, responseId: string): Promise<boolean> {
    const values = [responseId, organizationId, userId];
    // READ COMMITTED whatever the server's default: the second statement needs its own snapshot.
    return this.dataSource.transaction('READ COMMITTED', async (manager) => {
      const locked = await manager.query<unknown[]>(LOCK_RESPONSE_CONVERSATION, values);
      if (locked.length === 0) return false;
      const [row] = await manager.query<{ deleted: number }[]>(DELETE_RESPONSE, values);
      return row.deleted > 0;
    });
  }

  /**
   * Stores a finished turn atomically in one statement: the conversation (moved on, if it still
   * exists), the response (completing its start row), its chat-history messages and its pending
   * usage. True when the turn's end is stored, or its conversation is gone (deleted, or its user
   * erased, while it ran: only its usage is kept, under no user). False when the row was no longer
   * running (cancelled or swept meanwhile): then nothing was written, usage included.
   */
  saveTurn(turn: TurnRecord, events: StoredEvent[][] = []): Promise<boolean> {
    const batches = events.filter((batch) => batch.length > 0);
    const more = batches.length === 0 ? {} : eventBatchValues(batches);
    const statement = batches.length === 0 ? SAVE_TURN : SAVE_TURN_EVENTS;
    return inSpan('save turn', SAVE_TURN_SPAN, () =>
      this.writeTurn(statement, { ...more, ...turnEndValues(turn) }),
    );
  }

  /**
   * saveTurn for a turn whose start row is known to be written: its end columns alone, in one
   * UPDATE (turn-complete-sql.ts). When that stores nothing (the row ended elsewhere, deleted, its
   * conversation gone) or meets a pending usage row already, `turn_settle` decides in a new
   * snapshot (turn-settle-sql.ts); it never writes the row again, so a response deleted while its
   * turn ran stays deleted (only its usage is kept, and the turn counts as stored).
   */
  completeTurn(turn: TurnRecord, events: StoredEvent[][] = []): Promise<boolean> {
    const batches = events.filter((batch) => batch.length > 0);
    const more = batches.length === 0 ? {} : eventBatchValues(batches);
    const [narrow, settle] =
      batches.length === 0 ? [COMPLETE_TURN, SETTLE_TURN] : [COMPLETE_TURN_EVENTS, SETTLE_TURN_EVENTS];
    const statement = turn.newConversation ? narrow.new : narrow.continued;
    const values = { ...more, ...completeValues(turn) };
    return inSpan('save turn', COMPLETE_TURN_SPAN, async () => {
      try {
        if (await this.writeTurn(statement, values)) return true;
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
      }
      return this.writeTurn(settle, values);
    });
  }

  /**
   * Stores a whole turn that wrote no start row (a foreground JSON turn), in one statement of
   * INSERTs: the conversation when the turn starts it (else it is only updated), the response, all
   * its messages, its usage. True as for saveTurn (a conversation gone: usage kept, nothing else
   * stored). False when it wrote nothing: the conversation id is another organization's (the
   * update finds no row of this one); the caller then answers what GET would, 404. Turns whose
   * write arrives while another's is in flight are written together (TurnInsertGroups).
   */
  insertTurn(turn: TurnRecord): Promise<boolean> {
    return inSpan('save turn', SAVE_TURN_SPAN, () => this.insertGroups.insert(turn));
  }

  /** insertTurn for one turn, in its own statement (a lone turn, or one of a refused group). */
  private async insertOneTurn(turn: TurnRecord): Promise<boolean> {
    const statement = turn.newConversation ? INSERT_TURN_NEW : INSERT_TURN;
    try {
      return await this.writeTurn(statement, turnEndValues(turn));
    } catch (error) {
      // Plain INSERTs are not idempotent: a connection lost after the commit but before its
      // reply leaves the outcome unknown, and the same insert replayed fails on its own keys
      // (23505). The response id is the turn's own and fresh, and the statement all or nothing:
      // its row, of this tenant and with this status, means this very write is stored (a
      // group's too: a turn of a refused group comes here).
      if (!isDatabaseUnavailable(error) && !isUniqueViolation(error)) throw error;
      if (!(await responseRowWritten(this.dataSource, turn, 'status', turn.status))) throw error;
      return true;
    }
  }

  /** Runs a final write with its values; true when it stored the turn. */
  private async writeTurn(
    statement: NamedStatement<string>,
    values: Record<string, unknown>,
  ): Promise<boolean> {
    const [row] = await preparedQuery<{ stored: number }>(this.dataSource, statement, statement.bind(values));
    return row.stored > 0;
  }

  /** A response of this organization and end user (FIND_RESPONSE). */
  async findResponse(
    organizationId: string,
    userId: string | null,
    responseId: string,
  ): Promise<StoredResponse | null> {
    const rows: Record<string, unknown>[] = await this.dataSource.query(FIND_RESPONSE, [
      responseId,
      organizationId,
      userId,
    ]);
    return rows[0] ? storedResponse(rows[0]) : null;
  }

  /**
   * Every conversation, response and chat-history message of one user of one organization,
   * inside the caller's erase transaction. Children go first so each count is exact (the foreign
   * keys and the trigger on responses would delete them anyway). Responses and messages are also
   * matched by their own user_id, although every turn lives in its user's conversation: nothing of
   * the user may survive.
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
    const mine = 'SELECT id FROM conversations WHERE organization_id = $1 AND user_id = $2';
    // The user's conversations first, in key order, as every turn's write and a response's deletion
    // take a conversation before its responses: taking the responses first could deadlock with them.
    await manager.query(`SELECT count(*) FROM (${mine} ORDER BY id FOR UPDATE) locked`, [
      organizationId,
      userId,
    ]);
    // Locked wherever read too, so that one started after the statement above is taken before its rows.
    const owned = `${mine} FOR UPDATE`;
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
    // and so is their usage not yet flushed (a flush after this adds it as anonymous). The flush
    // (UsageRollups) locks the same rows: both take usage_pending, then usage_daily, then
    // usage_hourly, each in key order, whatever the plan's scan order, or they could deadlock.
    await manager.query(
      `UPDATE usage_pending SET user_id = '' WHERE response_id IN (
         SELECT response_id FROM usage_pending WHERE organization_id = $1 AND user_id = $2
          ORDER BY response_id FOR UPDATE)`,
      [organizationId, userId],
    );
    for (const statement of FOLD_USER_USAGE) await manager.query(statement, [organizationId, userId]);
    return { conversations, responses, messages };
  }
}
