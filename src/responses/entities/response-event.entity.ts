import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { ResponsePartEntity } from './response-part.entity.js';

/**
 * One stream event of a background turn, as releases before `response_event_batches` stored them
 * (one row per event). No longer written: still read, so a stream of a turn that a replica of the
 * previous release ran resumes during a rolling upgrade, and expired like the batches. A later
 * release drops it (docs/architecture.md, "Durable turns").
 */
@Entity({ name: 'response_events' })
@Index('IDX_response_events_created_at', ['createdAt'])
export class ResponseEventEntity extends ResponsePartEntity {
  @PrimaryColumn({ name: 'sequence_number', type: 'integer' })
  sequenceNumber!: number;

  @Column({ name: 'event_type', type: 'varchar', length: 96 })
  eventType!: string;

  @Column({ type: 'text' })
  data!: string;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;
}
