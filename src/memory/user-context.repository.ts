import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { preparedQuery, type PreparedStatement } from '../database/prepared-query.js';
import { OPTED_OUT_SQL } from './memory-opt-out.sql.js';

export interface UserContextRow {
  claims: { claimKey: string; claimValue: unknown }[];
  /** `createdAt` as PostgreSQL writes a timestamptz in JSON. */
  memory: { id: string; content: string; createdAt: string }[];
  memoryOptedOut: boolean;
}

interface LoadRow {
  memory_opted_out: boolean;
  claims: UserContextRow['claims'];
  memory: UserContextRow['memory'];
}

/**
 * Prepared: every turn with a user runs it, and parsing and planning its CTEs, window and two
 * aggregates on each call cost the database more than executing it (docs/benchmarks.md, round
 * "ctxprep").
 */
const LOAD_USER_CONTEXT: PreparedStatement = {
  name: 'user_context_load',
  text: `WITH opted_out AS (
         SELECT ${OPTED_OUT_SQL} AS value
       ), newest AS (
         SELECT id, content, created_at,
                sum(char_length(content)) OVER (ORDER BY created_at DESC, id DESC ROWS UNBOUNDED PRECEDING)
                  AS running_chars
           FROM (
             SELECT id, content, created_at
               FROM memory_items
              WHERE organization_id = $1::uuid AND user_id = $2 AND assistant_id = $3::uuid
                AND NOT (SELECT value FROM opted_out)
              ORDER BY created_at DESC, id DESC
              LIMIT $5::integer
           ) recent
       )
       SELECT
         (SELECT value FROM opted_out) AS memory_opted_out,
         COALESCE(
           (SELECT json_agg(json_build_object('claimKey', claim_key, 'claimValue', claim_value) ORDER BY claim_key COLLATE "C")
              FROM user_claims
             WHERE organization_id = $1::uuid AND user_id = $2),
           '[]'::json
         ) AS claims,
         COALESCE(
           (SELECT json_agg(json_build_object('id', id, 'content', content, 'createdAt', created_at)
                            ORDER BY created_at DESC, id DESC)
              FROM newest
             WHERE running_chars <= $4::integer),
           '[]'::json
         ) AS memory`,
};

/**
 * The per-turn read of everything known about the end user: claims, memory of this assistant,
 * and the opt-out. One statement, because a turn may spend only two reads before the upstream
 * call (field notes); memory is cut at the budget inside the database so no more than fits
 * ever crosses the wire.
 */
@Injectable()
export class UserContextRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async load(
    organizationId: string,
    userId: string,
    assistantId: string,
    memoryBudgetChars: number,
    maxMemoryItems: number,
  ): Promise<UserContextRow> {
    const [row] = await preparedQuery<LoadRow>(this.dataSource, LOAD_USER_CONTEXT, [
      organizationId,
      userId,
      assistantId,
      memoryBudgetChars,
      maxMemoryItems,
    ]);
    return { claims: row.claims, memory: row.memory, memoryOptedOut: row.memory_opted_out };
  }
}
