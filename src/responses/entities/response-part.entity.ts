import { JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { ResponseEntity } from './response.entity.js';

/**
 * The columns every table of a response's own rows starts with: `response_id`, the first column
 * of its key, whose rows are deleted with the response. Not an entity itself (as
 * OrganizationScopedEntity): each subclass is its own table.
 */
export abstract class ResponsePartEntity {
  @PrimaryColumn({ name: 'response_id', type: 'uuid' })
  responseId!: string;

  @ManyToOne(() => ResponseEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'response_id' })
  response?: ResponseEntity;
}
