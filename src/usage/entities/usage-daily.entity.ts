import { Entity, PrimaryColumn } from 'typeorm';
import { UsageRollupColumns } from './usage-rollup-columns.js';

/**
 * One day of usage for one combination of the dimensions (assistant, specialist, key, user) and
 * currency. Written only by the turn's one statement (TurnStore.saveTurn), which upserts it; read
 * by the budget check (the usage report reads usage_hourly).
 */
@Entity({ name: 'usage_daily' })
export class UsageDailyEntity extends UsageRollupColumns {
  /** The UTC day the turn completed on. */
  @PrimaryColumn({ type: 'date' })
  day!: string;
}
