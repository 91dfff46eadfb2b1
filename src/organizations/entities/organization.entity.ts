import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import type { EmbeddingsSettings } from '../embeddings-settings.js';

@Entity({ name: 'organizations' })
export class OrganizationEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  /** Stable handle; also the first segment of an identity-provider group path (`/acme/...`). */
  @Column({ type: 'varchar', length: 64, unique: true })
  slug!: string;

  @Column({ type: 'varchar', length: 200 })
  name!: string;

  /** Requests per minute; null means the configured default. */
  @Column({ name: 'rate_limit_per_minute', type: 'integer', nullable: true })
  rateLimitPerMinute!: number | null;

  /** Tokens (input + output) per UTC calendar month; null means no budget. */
  @Column({
    name: 'monthly_token_budget',
    type: 'bigint',
    nullable: true,
    transformer: {
      to: (value: number | null) => value,
      from: (value: string | null) => (value === null ? null : Number(value)),
    },
  })
  monthlyTokenBudget!: number | null;

  /**
   * Environment variables the platform lets this organization's admin reference (model
   * `apiKeyEnv`, tool `fromEnv` headers, REST `env` auth, web-search `apiKeyEnv`). Platform only.
   */
  @Column({ name: 'secret_env_grants', type: 'text', array: true, default: () => "'{}'" })
  secretEnvGrants!: string[];

  /**
   * Non-public hosts (CIDRs, addresses, host names, host:port, as SSRF_ALLOWLIST) this
   * organization's configuration may reach: model base URLs and tools. Platform only.
   */
  @Column({ name: 'ssrf_allowlist', type: 'text', array: true, default: () => "'{}'" })
  ssrfAllowlist!: string[];

  /** The organization's embedder (EmbeddingsSettings); null: the local embedder. Platform only. */
  @Column({ type: 'jsonb', nullable: true })
  embeddings!: EmbeddingsSettings | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
