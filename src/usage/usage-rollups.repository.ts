import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { flushPendingSql } from './usage-rollup-sql.js';

/**
 * This replica's turns: the pending rows it wrote, by response id, locked in id order whatever
 * the plan (an index walk or a bitmap's heap order), as the erasure of a user locks them
 * (TurnStore.eraseUserHistory): two orders could deadlock.
 */
const FLUSH_LOCAL = flushPendingSql(
  `DELETE FROM usage_pending WHERE response_id IN (
       SELECT response_id FROM usage_pending WHERE response_id = ANY($1::uuid[])
        ORDER BY response_id FOR UPDATE)
     RETURNING *`,
);

/**
 * Pending rows older than the cutoff, whichever replica wrote them (one that died before its
 * flush), a bounded batch at a time; rows another flush is deleting right now are skipped, not waited for.
 */
const FLUSH_ORPHANS = flushPendingSql(
  `DELETE FROM usage_pending WHERE response_id IN (
       SELECT response_id FROM usage_pending WHERE completed_at < $1::timestamptz
        ORDER BY completed_at LIMIT $2::int FOR UPDATE SKIP LOCKED)
     RETURNING *`,
);

/**
 * The writer of the usage rollups (`usage_daily`, `usage_hourly`): it moves stored turns' usage
 * from `usage_pending` into them, one statement per flush (docs/usage.md, "Freshness").
 */
@Injectable()
export class UsageRollups {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Adds the pending usage of these turns; returns how many were still pending. */
  async flush(responseIds: string[]): Promise<number> {
    const [row] = await this.dataSource.query<{ turns: number }[]>(FLUSH_LOCAL, [responseIds]);
    return row.turns;
  }

  /** Adds up to `limit` turns whose usage is pending since before `cutoff`; returns how many. */
  async flushOrphans(cutoff: Date, limit: number): Promise<number> {
    const [row] = await this.dataSource.query<{ turns: number }[]>(FLUSH_ORPHANS, [cutoff, limit]);
    return row.turns;
  }
}
