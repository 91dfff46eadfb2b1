import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { SharedLoads } from '../common/cache/shared-loads.js';
import { afterCommit } from '../database/transactional-connection.js';
import { assertUnderQuota } from '../common/errors/quota.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { describeUnexpected } from '../common/errors/all-exceptions.filter.js';
import { apiKeyHint, generateApiKey, hashApiKey, isSha256Hex, isWellFormedApiKey } from './api-key-format.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { API_KEY_SCOPES, ApiKeyEntity, type ApiKeyScope } from './entities/api-key.entity.js';

/** Who is calling, once a key has been checked. */
export interface ApiKeyPrincipal {
  keyId: string;
  organizationId: string;
  scopes: readonly ApiKeyScope[];
}

interface CacheEntry {
  principal: ApiKeyPrincipal | null;
  expiresAt: number;
}

const MAX_CACHED_KEYS = 10_000;
const LAST_USED_RESOLUTION_MS = 60_000;

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

@Injectable()
export class ApiKeysService {
  private readonly logger = new Logger('ApiKeys');
  /** Hash → principal (or null for unknown/revoked), so a recently seen key costs no query. */
  private readonly cache = new Map<string, CacheEntry>();
  private readonly lastTouched = new Map<string, number>();
  /** Lookups under way, by hash: a key's expired entry is reloaded by one query. */
  private readonly loads = new SharedLoads<ApiKeyPrincipal | null>();

  constructor(
    private readonly repository: ApiKeysRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Checks a presented key. A malformed key is refused without touching the database; a known
   * key is answered from memory for `API_KEY_CACHE_TTL_SECONDS`, which bounds how long a
   * revocation takes to apply.
   */
  async authenticate(presented: string): Promise<ApiKeyPrincipal | null> {
    if (!isWellFormedApiKey(presented)) return null;
    const keyHash = hashApiKey(presented);
    const now = Date.now();
    const cached = this.cache.get(keyHash);
    if (cached && cached.expiresAt > now) {
      if (cached.principal) this.touch(cached.principal.keyId, now);
      return cached.principal;
    }
    const lookup = async () => {
      const record = await this.repository.findActiveByHash(keyHash);
      return record
        ? { keyId: record.id, organizationId: record.organizationId, scopes: record.scopes }
        : null;
    };
    // Without a cache (TTL 0) every request reads the key itself: a revocation applies at once.
    const principal =
      this.config.auth.apiKeyCacheTtlMs === 0
        ? await lookup()
        : await this.loads.run(keyHash, lookup, (loaded) =>
            this.remember(keyHash, { principal: loaded, expiresAt: now + this.config.auth.apiKeyCacheTtlMs }),
          );
    if (principal) this.touch(principal.keyId, now);
    return principal;
  }

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
    if (revoked) this.forget(keyId, manager);
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
    this.forget(existing.id, manager);
    return { key: await this.repository.saveIn(existing, manager), action: 'updated' };
  }

  /** `apply --prune`: revokes the organization's active keys not declared (by hash). */
  async revokeUndeclared(
    organizationId: string,
    keepHashes: readonly string[],
    manager: EntityManager,
  ): Promise<ApiKeyEntity[]> {
    const revoked = await this.repository.revokeExcept(organizationId, keepHashes, new Date(), manager);
    for (const key of revoked) this.forget(key.id, manager);
    return revoked;
  }

  /**
   * This process stops trusting a changed key at once; other processes within the cache TTL.
   * Forgotten again once `manager`'s transaction commits: a lookup between now and the commit
   * reads the key as it was, on another connection, and would be kept.
   */
  private forget(keyId: string, manager?: EntityManager): void {
    const forgetNow = () => {
      for (const [hash, entry] of this.cache) if (entry.principal?.keyId === keyId) this.cache.delete(hash);
      // A lookup under way names no key until it ends: none of them is kept (revocations are rare).
      this.loads.forgetAll();
    };
    forgetNow();
    afterCommit(manager, forgetNow);
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

  private remember(keyHash: string, entry: CacheEntry): void {
    if (this.config.auth.apiKeyCacheTtlMs === 0) return;
    if (this.cache.size >= MAX_CACHED_KEYS) {
      // Maps iterate in insertion order: drop the oldest entry.
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    this.cache.set(keyHash, entry);
  }

  /** Records last use at minute resolution, off the request path. */
  private touch(keyId: string, now: number): void {
    const last = this.lastTouched.get(keyId) ?? 0;
    if (now - last < LAST_USED_RESOLUTION_MS) return;
    this.lastTouched.set(keyId, now);
    this.repository.touchLastUsed(keyId, new Date(now)).catch((error: unknown) => {
      this.logger.warn({ ...describeUnexpected(error), msg: 'could not record key use' });
    });
  }
}
