import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/** Who made a change: an organization's `admin` key, a platform administrator's token, or the CLI. */
export type AuditActorType = 'api_key' | 'oidc' | 'cli';

/**
 * One change made through the admin API, the admin CLI or `apply`, written in the transaction of
 * the change, or one admin request refused (action `denied`). No foreign key: the trail outlives
 * what it describes. Append-only: a trigger refuses UPDATE, DELETE and TRUNCATE.
 */
@Entity({ name: 'audit_log' })
@Index('IDX_audit_log_org_created', ['organizationId', 'createdAt', 'id'])
@Index('IDX_audit_log_created', ['createdAt', 'id'])
export class AuditLogEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  /** The organization the change belongs to; null for none (never the case today). */
  @Column({ name: 'organization_id', type: 'uuid', nullable: true })
  organizationId!: string | null;

  @Column({ name: 'actor_type', type: 'varchar', length: 16 })
  actorType!: AuditActorType;

  /** The key id, the token's subject, or the CLI's operating-system user. */
  @Column({ name: 'actor_id', type: 'varchar', length: 255 })
  actorId!: string;

  /** The token's issuer (actor_type oidc); null otherwise. */
  @Column({ name: 'actor_issuer', type: 'varchar', length: 2048, nullable: true })
  actorIssuer!: string | null;

  /** `created`, `updated`, `revoked`, `deleted`, `denied`. */
  @Column({ type: 'varchar', length: 32 })
  action!: string;

  /** `organization`, `assistant`, `specialist`, `tool`, `plugin`, `gateway`, `api_key`. */
  @Column({ name: 'resource_type', type: 'varchar', length: 32 })
  resourceType!: string;

  @Column({ name: 'resource_id', type: 'varchar', length: 255 })
  resourceId!: string;

  /** The resource as it was (null when created) and as it is now; never a secret or hash. */
  @Column({ type: 'jsonb', nullable: true })
  before!: unknown;

  @Column({ type: 'jsonb', nullable: true })
  after!: unknown;

  /** The id the server gave the request (never the client's own); null for the CLI. */
  @Column({ name: 'request_id', type: 'varchar', length: 128, nullable: true })
  requestId!: string | null;

  /** The `x-request-id` the client sent, when it sent a usable one. */
  @Column({ name: 'client_request_id', type: 'varchar', length: 128, nullable: true })
  clientRequestId!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
