import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { isUniqueViolation } from '../../database/sql-errors.js';
import type { TurnRecord, TurnStatus } from '../../turns/turn.types.js';
import { eventBatchText } from './event-batch-sql.js';
import { usageRowsParam } from './turn-end-sql.js';
import { RUNNING, runningByKey } from './turn-sql.js';

/** The state of a turn that resuming and cancelling need. */
export interface TurnState {
  id: string;
  status: TurnStatus;
  background: boolean;
  error: { type: string; code: string; message: string } | null;
}

/** One stored stream event; `data` is the JSON text exactly as it was sent. */
export interface StoredEvent {
  sequenceNumber: number;
  type: string;
  data: string;
}

// UPDATE and DELETE … RETURNING are wrapped in a SELECT: TypeORM answers a bare one with
// [rows, count] rather than rows.

/**
 * The ledger of running turns, part of the turn store (it writes the same tables): the
 * start-of-turn row, the leases of running turns, cancellation, the sweep of turns whose replica
 * died, and the events of background turns. Every read names the tenant.
 */
@Injectable()
export class TurnLedger {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** A queued background turn this replica starts running. */
  async markRunning(responseId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE responses SET status = 'in_progress' WHERE id = $1 AND status = 'queued'`,
      [responseId],
    );
  }

  /**
   * Renews the leases of this replica's running turns in one statement; returns those still
   * running (a turn missing from the answer was cancelled, or swept while this replica stalled).
   * Its commit does not wait for the WAL flush (synchronous_commit off for it alone): a renewal
   * lost to a crash of the PostgreSQL server is one that was not made, which the lease
   * (TURN_LEASE_SECONDS over TURN_LEASE_RENEW_MS) is sized for; the next one, or any synchronous
   * commit after it, flushes the lease (docs/architecture.md, Durable turns).
   */
  async renewLeases(ownerId: string, responseIds: string[], leaseMs: number): Promise<Set<string>> {
    const rows: { id: string }[] = await this.dataSource.query(
      `WITH renewed AS (
         UPDATE responses SET lease_expires_at = now() + $3::int * interval '1 millisecond'
          WHERE id = ANY($1::uuid[]) AND owner_id = $2 AND ${RUNNING}
         RETURNING id
       ) SELECT id FROM renewed WHERE set_config('synchronous_commit', 'off', true) IS NOT NULL`,
      [responseIds, ownerId, leaseMs],
    );
    return new Set(rows.map((row) => row.id));
  }

  /** Marks every running turn whose lease has lapsed (its replica died) failed; returns how many. */
  async failExpired(error: { type: string; code: string; message: string }): Promise<number> {
    const rows: unknown[] = await this.dataSource.query(
      `WITH swept AS (
         UPDATE responses SET status = 'failed', error = $1::jsonb, completed_at = now()
          WHERE ${RUNNING} AND lease_expires_at < now()
         RETURNING id
       ) SELECT id FROM swept`,
      [JSON.stringify(error)],
    );
    return rows.length;
  }

  /** The state of a response of this organization and user (an anonymous one only anonymously). */
  async findTurn(
    organizationId: string,
    responseId: string,
    userId: string | null,
  ): Promise<TurnState | null> {
    const rows: {
      id: string;
      status: TurnStatus;
      background: boolean;
      error: TurnState['error'];
    }[] = await this.dataSource.query(
      `SELECT id, status, background, error FROM responses
          WHERE id = $1 AND organization_id = $2 AND user_id IS NOT DISTINCT FROM $3::varchar`,
      [responseId, organizationId, userId],
    );
    return rows[0] ?? null;
  }

  /** Cancels a running background turn of this organization; false when it was not running. */
  async cancel(organizationId: string, responseId: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `WITH cancelled AS (
         UPDATE responses SET status = 'cancelled', completed_at = now()
          WHERE id = $1 AND organization_id = $2 AND background AND ${runningByKey('status')}
         RETURNING id
       ) SELECT id FROM cancelled`,
      [responseId, organizationId],
    );
    return rows.length > 0;
  }

  /**
   * The usage of a turn whose row was ended elsewhere (cancelled, or swept while this replica
   * stalled), which its final write therefore cannot store: left pending for the rollups as a
   * stored turn's is, in one statement. The row's `usage`, empty until a final write stores it,
   * is set here too and is the guard that makes the turn count once. True when it was recorded.
   */
  async recordEndedUsage(turn: TurnRecord): Promise<boolean> {
    if (turn.usageRows.length === 0) return false;
    const [row] = await this.dataSource.query<{ recorded: number }[]>(
      `WITH marked AS (
         UPDATE responses SET usage = $3::jsonb
          WHERE id = $1 AND organization_id = $2 AND usage IS NULL
         RETURNING id
       ), pending AS (
         INSERT INTO usage_pending (response_id, organization_id, completed_at, assistant_id, specialist,
                                    api_key_id, user_id, usage_rows)
         SELECT id, $2::uuid, $4::timestamptz, $5::uuid, coalesce($6::varchar, ''), $7::uuid,
                coalesce($8::varchar, ''), $9::jsonb
           FROM marked
         ON CONFLICT (response_id) DO NOTHING
         RETURNING 1
       ) SELECT count(*)::integer AS recorded FROM pending`,
      [
        turn.responseId,
        turn.organizationId,
        JSON.stringify(turn.usage),
        turn.completedAt,
        turn.assistantId,
        turn.activeAgent,
        turn.apiKeyId,
        turn.userId,
        usageRowsParam(turn.usageRows),
      ],
    );
    return row.recorded > 0;
  }

  /**
   * The usage of a streamed turn whose start was refused: no row holds it, so it is left pending
   * under no user (as a deleted conversation's turn's), keyed by the turn's unused id. True: recorded.
   */
  async recordRefusedUsage(turn: TurnRecord): Promise<boolean> {
    const { responseId, organizationId, completedAt, assistantId, activeAgent, apiKeyId } = turn;
    const rows: unknown[] = await this.dataSource.query(
      `INSERT INTO usage_pending (response_id, organization_id, completed_at, assistant_id, specialist,
                                  api_key_id, user_id, usage_rows)
       VALUES ($1, $2, $3, $4, coalesce($5::varchar, ''), $6, '', $7::jsonb)
       ON CONFLICT (response_id) DO NOTHING RETURNING 1`,
      [
        responseId,
        organizationId,
        completedAt,
        assistantId,
        activeAgent,
        apiKeyId,
        usageRowsParam(turn.usageRows),
      ],
    );
    return rows.length > 0;
  }

  /**
   * Stores one flush of a background turn's events as one row (its events as one JSON array,
   * keyed by its first sequence number), only while the turn is still running: once it is
   * cancelled or swept, its stream is closed for good. No ON CONFLICT: a turn's events have one
   * writer, the replica that owns it (no other replica runs a turn; a swept one is not running),
   * and it writes its flushes one after another. A batch already stored (a commit whose answer
   * was lost, written again by the retry) fails on the key and is dropped here: the row holds it.
   */
  async appendEvents(responseId: string, events: StoredEvent[]): Promise<void> {
    if (events.length === 0) return;
    try {
      await this.dataSource.query(
        `INSERT INTO response_event_batches (response_id, first_sequence, last_sequence, events)
         SELECT $1::uuid, $2::int, $3::int, $4::json
          WHERE EXISTS (SELECT 1 FROM responses WHERE id = $1 AND ${runningByKey('status')})`,
        [
          responseId,
          events[0].sequenceNumber,
          events[events.length - 1].sequenceNumber,
          eventBatchText(events),
        ],
      );
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
  }

  /**
   * Events after `after`, in order, of a response of this organization and end user: the
   * elements of the batches that reach past `after`, numbered from the batch's first sequence (a
   * resume can start in the middle of a batch), and the per-event rows a replica of the previous
   * release wrote. Each element is the exact text stored. Nothing inside an event is decoded in
   * SQL: a model's text may hold what a JSON path cannot extract (a lone surrogate's escape).
   */
  async readEvents(
    organizationId: string,
    userId: string | null,
    responseId: string,
    after: number,
    limit: number,
  ): Promise<StoredEvent[]> {
    const rows: { sequence_number: number; data: string }[] = await this.dataSource.query(
      `SELECT e.sequence_number, e.data
         FROM responses r
        CROSS JOIN LATERAL (
          SELECT b.first_sequence + e.ordinality::int - 1 AS sequence_number, e.value::text AS data
            FROM response_event_batches b
           CROSS JOIN LATERAL json_array_elements(b.events) WITH ORDINALITY AS e(value, ordinality)
           WHERE b.response_id = r.id AND b.last_sequence > $3
          UNION ALL
          SELECT o.sequence_number, o.data FROM response_events o
           WHERE o.response_id = r.id AND o.sequence_number > $3
        ) e
        WHERE r.id = $1 AND r.organization_id = $2 AND r.user_id IS NOT DISTINCT FROM $5::varchar
          AND e.sequence_number > $3
        ORDER BY e.sequence_number
        LIMIT $4`,
      [responseId, organizationId, after, limit, userId],
    );
    return rows.map((row) => ({
      sequenceNumber: row.sequence_number,
      type: (JSON.parse(row.data) as { type: string }).type,
      data: row.data,
    }));
  }

  /**
   * Deletes the events of turns that ended more than `retentionMs` ago, batches and the previous
   * release's per-event rows; returns how many rows. Every ended turn has a `completed_at` (the final write, a cancel, the sweep); a running one has
   * none, so its events stay.
   */
  async deleteExpiredEvents(retentionMs: number): Promise<number> {
    const [row] = await this.dataSource.query<{ count: number }[]>(
      `WITH batches AS (
         DELETE FROM response_event_batches b USING responses r
          WHERE r.id = b.response_id AND r.completed_at < now() - $1::bigint * interval '1 millisecond'
         RETURNING 1
       ), legacy AS (
         DELETE FROM response_events o USING responses r
          WHERE r.id = o.response_id AND r.completed_at < now() - $1::bigint * interval '1 millisecond'
         RETURNING 1
       ) SELECT ((SELECT count(*) FROM batches) + (SELECT count(*) FROM legacy))::integer AS count`,
      [retentionMs],
    );
    return row.count;
  }
}
