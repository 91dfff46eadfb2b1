import { Column, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { OrganizationEntity } from '../../organizations/entities/organization.entity.js';

/** bigint and numeric columns come back from pg as strings; these sums stay far below 2^53. */
const numeric = { to: (value: number) => value, from: (value: string | null) => Number(value ?? 0) };

/**
 * The columns both usage rollups share (usage_daily, usage_hourly): the dimensions in the key
 * besides the time bucket (and the model, hourly only), and the counts. The generic agent is
 * specialist `''`, an anonymous turn user `''`, an unpriced model currency `''` (a key column
 * cannot be NULL).
 */
export abstract class UsageRollupColumns {
  @PrimaryColumn({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id' })
  organization?: OrganizationEntity;

  @PrimaryColumn({ name: 'assistant_id', type: 'uuid' })
  assistantId!: string;

  @PrimaryColumn({ type: 'varchar', length: 64 })
  specialist!: string;

  @PrimaryColumn({ name: 'api_key_id', type: 'uuid' })
  apiKeyId!: string;

  @PrimaryColumn({ name: 'user_id', type: 'varchar', length: 256 })
  userId!: string;

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
