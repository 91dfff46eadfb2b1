import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A stored turn's usage not yet added to the rollups (usage_daily, usage_hourly): written by the
 * turn's own statement, deleted by the flush that adds it (UsageRollups), so a turn counts exactly
 * once even when its replica died before the flush. Holds about USAGE_FLUSH_MS of turns. No
 * foreign key (a lock on the organization's row per turn): a trigger deletes an organization's
 * rows with it, and the flush skips a row whose organization is gone (migration 1796670000201).
 */
@Entity({ name: 'usage_pending' })
export class UsagePendingEntity {
  @PrimaryColumn({ name: 'response_id', type: 'uuid' })
  responseId!: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  /** When the turn completed: its day and hour in the rollups. */
  @Column({ name: 'completed_at', type: 'timestamptz' })
  completedAt!: Date;

  @Column({ name: 'assistant_id', type: 'uuid' })
  assistantId!: string;

  /** `''` for the assistant's generic agent, as in the rollups. */
  @Column({ type: 'varchar', length: 64 })
  specialist!: string;

  @Column({ name: 'api_key_id', type: 'uuid' })
  apiKeyId!: string;

  /** `''` for an anonymous turn, as in the rollups. */
  @Column({ name: 'user_id', type: 'varchar', length: 256 })
  userId!: string;

  /** The turn's counts per answering model and currency (TurnRecord.usageRows, snake_case keys). */
  @Column({ name: 'usage_rows', type: 'jsonb' })
  usageRows!: unknown[];
}
