import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { ResponseEntity } from './response.entity.js';

/**
 * One stream event of a background turn, kept so a stream can be resumed on any replica: `data`
 * is the exact JSON text sent, so a replay is byte-identical. Deleted with its response, and
 * after BACKGROUND_EVENTS_RETENTION_HOURS once the turn has ended.
 */
@Entity({ name: 'response_events' })
@Index('IDX_response_events_created_at', ['createdAt'])
export class ResponseEventEntity {
  @PrimaryColumn({ name: 'response_id', type: 'uuid' })
  responseId!: string;

  @PrimaryColumn({ name: 'sequence_number', type: 'integer' })
  sequenceNumber!: number;

  @ManyToOne(() => ResponseEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'response_id' })
  response?: ResponseEntity;

  @Column({ name: 'event_type', type: 'varchar', length: 96 })
  eventType!: string;

  @Column({ type: 'text' })
  data!: string;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;
}
