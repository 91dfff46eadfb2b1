import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { assertUnderQuota } from '../common/errors/quota.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { apiKeyHint, generateApiKey, hashApiKey, isSha256Hex, isWellFormedApiKey } from './api-key-format.js';
import { ApiKeyAuthenticator } from './api-key-authenticator.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { API_KEY_SCOPES, ApiKeyEntity, type ApiKeyScope } from './entities/api-key.entity.js';

/** The principal is the authenticator's; re-exported for the many places that take one. */
export type { ApiKeyPrincipal } from './api-key-authenticator.js';

export class ApiKeyInputError extends Error {}

export function parseScopes(input: readonly string[]): ApiKeyScope[] {
  const scopes = [...new Set(input)];
  if (scopes.length === 0) throw new ApiKeyInputError('a key needs at least one scope');
  for (const scope of scopes) {
    if (!(API_KEY_SCOPES as readonly string[]).includes(scope)) {
      throw new ApiKeyInputError(`unknown scope "${scope}" (use ${API_KEY_SCOPES.join(', ')})`);
    }
  }
  return scopes as ApiKeyScope[];
}

/**
 * The management of API keys (create, import, declare, revoke, list); checking a presented key is
 * ApiKeyAuthenticator's, which each change here tells to forget the key.
 */
@Injectable()
export class ApiKeysService {
  constructor(
    private readonly repository: ApiKeysRepository,
    private readonly authenticator: ApiKeyAuthenticator,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(
    organizationId: string,
    name: string,
    scopes: readonly string[],
    manager?: EntityManager,
  ): Promise<{ key: ApiKeyEntity; secret: string }> {
    await this.assertRoom(organizationId, manager);
    const secret = generateApiKey();
    const key = await this.repository.insert(
      this.newRecord(
        organizationId,
        name,
        hashApiKey(secret),
        apiKeyHint(secret),
        parseScopes(scopes),
        false,
      ),
      manager,
    );
    return { key, secret };
  }

  /** 409 quota_exceeded when the organization has QUOTA_API_KEYS_PER_ORGANIZATION active keys. */
  private async assertRoom(organizationId: string, manager?: EntityManager): Promise<void> {
    const quota = this.config.quotas.apiKeysPerOrganization;
    if (quota === 0) return;
    const count = await this.repository.countActive(organizationId, manager);
    assertUnderQuota(count, quota, 'active API keys', 'QUOTA_API_KEYS_PER_ORGANIZATION');
  }

  /** Imports a key of the earlier format by its SHA-256, so the key itself never travels. */
  async importLegacy(
    organizationId: string,
    name: string,
    sha256: string,
    scopes: readonly string[],
  ): Promise<ApiKeyEntity> {
    const keyHash = sha256.toLowerCase();
    if (!isSha256Hex(keyHash)) throw new ApiKeyInputError('the hash must be 64 hexadecimal characters');
    if (await this.repository.findByHash(keyHash))
      throw new ApiKeyInputError('a key with this hash already exists');
    await this.assertRoom(organizationId);
    return this.repository.insert(
      this.newRecord(organizationId, name, keyHash, 'legacy', parseScopes(scopes), true),
    );
  }

  find(organizationId: string, keyId: string): Promise<ApiKeyEntity | null> {
    return this.repository.findForOrganization(organizationId, keyId);
  }

  list(organizationId: string): Promise<ApiKeyEntity[]> {
    return this.repository.listForOrganization(organizationId);
  }

  /** `manager` joins a caller's transaction (the admin API writes its audit row in it). */
  async revoke(organizationId: string, keyId: string, manager?: EntityManager): Promise<boolean> {
    const revoked = await this.repository.revoke(organizationId, keyId, new Date(), manager);
    // This process forgets at once; other processes within the cache TTL.
    if (revoked) this.authenticator.forget(keyId, manager);
    return revoked;
  }

  /**
   * Declares a key the caller holds (the declarative apply reads it from a secret in its
   * environment; only its SHA-256 is stored): imports it, or brings its name and scopes up to date. A hash that belongs to
   * another organization, or to a revoked key, is refused: a revoked key never comes back.
   */
  async declareByHash(
    organizationId: string,
    declaration: { name: string; key: string; scopes: readonly string[] },
    manager: EntityManager,
  ): Promise<{ key: ApiKeyEntity; action: 'created' | 'updated' | 'unchanged' }> {
    const scopes = parseScopes(declaration.scopes);
    if (!isWellFormedApiKey(declaration.key)) {
      throw new ApiKeyInputError('the key must be swb_ followed by base62 characters, or 64 lowercase hex');
    }
    const keyHash = hashApiKey(declaration.key);
    const existing = await this.repository.findByHashIn(keyHash, manager);
    if (!existing) {
      const legacy = isSha256Hex(declaration.key);
      const hint = legacy ? 'legacy' : apiKeyHint(declaration.key);
      const key = this.newRecord(organizationId, declaration.name, keyHash, hint, scopes, legacy);
      await this.assertRoom(organizationId, manager);
      return { key: await this.repository.saveIn(key, manager), action: 'created' };
    }
    if (existing.organizationId !== organizationId) {
      throw new ApiKeyInputError('this key already belongs to another organization');
    }
    if (existing.revokedAt !== null) throw new ApiKeyInputError('this key was revoked; declare a new one');
    const sameScopes = [...existing.scopes].sort().join() === [...scopes].sort().join();
    if (existing.name === declaration.name && sameScopes) return { key: existing, action: 'unchanged' };
    Object.assign(existing, { name: declaration.name, scopes });
    this.authenticator.forget(existing.id, manager);
    return { key: await this.repository.saveIn(existing, manager), action: 'updated' };
  }

  /** `apply --prune`: revokes the organization's active keys not declared (by hash). */
  async revokeUndeclared(
    organizationId: string,
    keepHashes: readonly string[],
    manager: EntityManager,
  ): Promise<ApiKeyEntity[]> {
    const revoked = await this.repository.revokeExcept(organizationId, keepHashes, new Date(), manager);
    for (const key of revoked) this.authenticator.forget(key.id, manager);
    return revoked;
  }

  private newRecord(
    organizationId: string,
    name: string,
    keyHash: string,
    hint: string,
    scopes: ApiKeyScope[],
    legacy: boolean,
  ): ApiKeyEntity {
    if (name.trim().length === 0 || name.length > 200)
      throw new ApiKeyInputError('name must be 1-200 characters');
    return Object.assign(new ApiKeyEntity(), {
      id: randomUUID(),
      organizationId,
      name,
      keyHash,
      hint,
      scopes,
      legacy,
      lastUsedAt: null,
      revokedAt: null,
    });
  }
}
