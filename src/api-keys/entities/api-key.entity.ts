import { Column, CreateDateColumn, Entity, Index } from 'typeorm';
import { OrganizationOwnedEntity } from '../../organizations/entities/organization-owned.entity.js';

/**
 * `admin` manages the key's own organization through the admin API (/admin/v1) and nothing else;
 * `full_access` does not include it (an admin key can mint keys), and it includes no other scope.
 */
export const API_KEY_SCOPES = ['full_access', 'assistant', 'user', 'admin'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

@Entity({ name: 'api_keys' })
@Index(['organizationId'])
export class ApiKeyEntity extends OrganizationOwnedEntity {
  @Column({ type: 'varchar', length: 200 })
  name!: string;

  /** Lowercase hex SHA-256 of the whole key; the key itself is never stored. */
  @Column({ name: 'key_hash', type: 'char', length: 64, unique: true })
  keyHash!: string;

  /** Non-secret display hint: prefix and last four characters. */
  @Column({ type: 'varchar', length: 32 })
  hint!: string;

  @Column({ type: 'text', array: true })
  scopes!: ApiKeyScope[];

  /** Imported by hash from the earlier 64-hex format. */
  @Column({ type: 'boolean', default: false })
  legacy!: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt!: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt!: Date | null;
}
