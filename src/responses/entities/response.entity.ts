import { Column, Entity, Index } from 'typeorm';
import { OrganizationScopedEntity } from '../../organizations/entities/organization-owned.entity.js';
import type { ChatMessage } from '../../llm/llm.types.js';
import type { TurnStatus } from '../../turns/turn.types.js';

/** Statuses of a turn that is still running somewhere (its owner renews the lease). */
export const RUNNING_STATUSES: readonly TurnStatus[] = ['queued', 'in_progress'];

/**
 * One turn. `output` is what the client saw; `transcript` is what the model saw added by this
 * turn (input, tool calls and tool results) so a thread is rebuilt by concatenating the
 * transcripts along the `previous_response_id` chain. No foreign key to `conversations` (a check
 * per turn): every writer inserts a response from the conversation row its own statement (or its
 * transaction) inserts or locks, and a trigger deletes a conversation's responses with it (migration 1796670000201).
 */
@Entity({ name: 'responses' })
@Index(['conversationId', 'createdAt'])
@Index('IDX_responses_running_lease', ['leaseExpiresAt'], { where: "status IN ('queued', 'in_progress')" })
@Index('IDX_responses_running_owner', ['ownerId'], { where: "status IN ('queued', 'in_progress')" })
export class ResponseEntity extends OrganizationScopedEntity {
  /** Null on a row that holds items added through the Conversations API (no model call). */
  @Column({ name: 'assistant_id', type: 'uuid', nullable: true })
  assistantId!: string | null;

  @Column({ name: 'conversation_id', type: 'uuid' })
  conversationId!: string;

  @Column({ name: 'previous_response_id', type: 'uuid', nullable: true })
  previousResponseId!: string | null;

  @Column({ name: 'user_id', type: 'varchar', length: 256, nullable: true })
  userId!: string | null;

  @Column({ type: 'varchar', length: 24 })
  status!: TurnStatus;

  /** Turns from the start of the conversation along this branch (1 for the first). */
  @Column({ type: 'integer' })
  depth!: number;

  /** The specialist that answered last; the next turn on this branch starts with it. */
  @Column({ name: 'active_agent', type: 'varchar', length: 64, nullable: true })
  activeAgent!: string | null;

  @Column({ type: 'text', nullable: true })
  instructions!: string | null;

  @Column({ type: 'jsonb' })
  input!: unknown[];

  @Column({ type: 'jsonb' })
  output!: unknown[];

  @Column({ name: 'output_text', type: 'text' })
  outputText!: string;

  @Column({ type: 'jsonb' })
  transcript!: ChatMessage[];

  @Column({ type: 'jsonb', nullable: true })
  usage!: Record<string, number> | null;

  @Column({ type: 'jsonb', nullable: true })
  error!: { type: string; code: string; message: string } | null;

  /**
   * Every upstream target each model call of the turn tried (target, outcome, HTTP status,
   * duration), the answering one marked (docs/resilience.md); null for the offline model.
   */
  @Column({ name: 'upstream_attempts', type: 'jsonb', nullable: true })
  upstreamAttempts!: unknown[] | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  /** Null while the turn runs. */
  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt!: Date | null;

  /**
   * The Response object as the client was sent it (all echoed parameters, metadata, usage), for
   * GET. `json`, not `jsonb`: the text is kept as written, so the copy is byte-identical. A running
   * turn holds the object its start announced until its final write replaces it.
   */
  @Column({ type: 'json', nullable: true })
  body!: unknown;

  /** Created with `background: true`: runs without its client, events kept for resumption. */
  @Column({ type: 'boolean', default: false })
  background!: boolean;

  /** The replica running the turn (its lease holder); set when the turn starts. */
  @Column({ name: 'owner_id', type: 'varchar', length: 64, nullable: true })
  ownerId!: string | null;

  /** A running turn whose lease is past this is marked failed by any replica's sweeper. */
  @Column({ name: 'lease_expires_at', type: 'timestamptz', nullable: true })
  leaseExpiresAt!: Date | null;
}
