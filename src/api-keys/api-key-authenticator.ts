import { Inject, Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { SharedLoads } from '../common/cache/shared-loads.js';
import { describeUnexpected } from '../common/errors/all-exceptions.filter.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { afterCommit } from '../database/transactional-connection.js';
import { hashApiKey, isWellFormedApiKey } from './api-key-format.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import type { ApiKeyScope } from './entities/api-key.entity.js';

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

/**
 * The request path of API keys: a presented key checked against its hash, answered from this
 * process's memory while fresh, and its last use recorded off the request. The key management
 * (ApiKeysService) tells it which keys changed, so this process stops trusting them at once.
 */
@Injectable()
export class ApiKeyAuthenticator {
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

  /**
   * This process stops trusting a changed key at once; other processes within the cache TTL.
   * Forgotten again once `manager`'s transaction commits: a lookup between now and the commit
   * reads the key as it was, on another connection, and would be kept.
   */
  forget(keyId: string, manager?: EntityManager): void {
    const forgetNow = () => {
      for (const [hash, entry] of this.cache) if (entry.principal?.keyId === keyId) this.cache.delete(hash);
      // A lookup under way names no key until it ends: none of them is kept (revocations are rare).
      this.loads.forgetAll();
    };
    forgetNow();
    afterCommit(manager, forgetNow);
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
