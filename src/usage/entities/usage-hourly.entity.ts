import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OrganizationEntity } from '../../organizations/entities/organization.entity.js';

/** bigint and numeric columns come back from pg as strings; these sums stay far below 2^53. */
const numeric = { to: (value: number) => value, from: (value: string | null) => Number(value ?? 0) };

/**
 * One UTC hour of usage for one combination of the dimensions (assistant, specialist, key, user,
 * model) and currency: what the usage report reads, for hourly, daily and monthly buckets alike,
 * so every bucket size adds up to the same totals. Written only by the turn's one statement
 * (TurnStore.saveTurn), beside `usage_daily` (which the budget check reads). Usage recorded before
 * this table existed was copied in at midnight of its day with model `''` (not known then).
 */
@Entity({ name: 'usage_hourly' })
export class UsageHourlyEntity {
  @PrimaryColumn({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id' })
  organization?: OrganizationEntity;

  /** The start of the UTC hour the turn completed in. */
  @PrimaryColumn({ type: 'timestamptz' })
  hour!: Date;

  @PrimaryColumn({ name: 'assistant_id', type: 'uuid' })
  assistantId!: string;

  @PrimaryColumn({ type: 'varchar', length: 64 })
  specialist!: string;

  @PrimaryColumn({ name: 'api_key_id', type: 'uuid' })
  apiKeyId!: string;

  @PrimaryColumn({ name: 'user_id', type: 'varchar', length: 256 })
  userId!: string;

  /** The upstream model that answered (`offline` for the offline model; `''`: not recorded). */
  @PrimaryColumn({ type: 'varchar', length: 256 })
  model!: string;

  @PrimaryColumn({ type: 'varchar', length: 8 })
  currency!: string;

  @Column({ type: 'bigint', default: 0, transformer: numeric })
  turns!: number;

  @Column({ name: 'input_tokens', type: 'bigint', default: 0, transformer: numeric })
  inputTokens!: number;

  @Column({ name: 'cached_tokens', type: 'bigint', default: 0, transformer: numeric })
  cachedTokens!: number;

  @Column({ name: 'output_tokens', type: 'bigint', default: 0, transformer: numeric })
  outputTokens!: number;

  @Column({ name: 'reasoning_tokens', type: 'bigint', default: 0, transformer: numeric })
  reasoningTokens!: number;

  @Column({ type: 'numeric', precision: 20, scale: 8, default: 0, transformer: numeric })
  cost!: number;
}
