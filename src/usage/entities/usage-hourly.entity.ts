import { Entity, PrimaryColumn } from 'typeorm';
import { UsageRollupColumns } from './usage-rollup-columns.js';

/**
 * One UTC hour of usage for one combination of the dimensions (assistant, specialist, key, user,
 * model) and currency: what the usage report reads, for hourly, daily and monthly buckets alike,
 * so every bucket size adds up to the same totals. Written only by the turn's one statement
 * (TurnStore.saveTurn), beside `usage_daily` (which the budget check reads). Usage recorded before
 * this table existed was copied in at midnight of its day with model `''` (not known then).
 */
@Entity({ name: 'usage_hourly' })
export class UsageHourlyEntity extends UsageRollupColumns {
  /** The start of the UTC hour the turn completed in. */
  @PrimaryColumn({ type: 'timestamptz' })
  hour!: Date;

  /** The upstream model that answered (`offline` for the offline model; `''`: not recorded). */
  @PrimaryColumn({ type: 'varchar', length: 256 })
  model!: string;
}
