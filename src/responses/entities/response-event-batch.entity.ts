import { Column, Entity, PrimaryColumn } from 'typeorm';
import { ResponsePartEntity } from './response-part.entity.js';

/**
 * The stream events of a background turn written in one flush, kept so a stream can be resumed
 * on any replica: `events` is a JSON array of the events exactly as sent (a `json` column keeps
 * the text), numbered `first_sequence` to `last_sequence` without gaps, so a replay is
 * byte-identical. One row per flush (BACKGROUND_EVENT_FLUSH_MS), not per event. Deleted with its
 * response, and BACKGROUND_EVENTS_RETENTION_HOURS after the response's `completed_at`.
 */
@Entity({ name: 'response_event_batches' })
export class ResponseEventBatchEntity extends ResponsePartEntity {
  @PrimaryColumn({ name: 'first_sequence', type: 'integer' })
  firstSequence!: number;

  @Column({ name: 'last_sequence', type: 'integer' })
  lastSequence!: number;

  @Column({ type: 'json' })
  events!: unknown[];
}
