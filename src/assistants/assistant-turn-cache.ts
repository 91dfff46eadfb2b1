import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { BoundedTtlCache } from '../common/cache/bounded-ttl-cache.js';
import { SharedLoads } from '../common/cache/shared-loads.js';
import { afterCommit } from '../database/transactional-connection.js';
import { AssistantsRepository } from './assistants.repository.js';
import type { AssistantEntity } from './entities/assistant.entity.js';

/** Assistants change rarely; a turn reads one from memory for a few seconds. */
const ASSISTANT_CACHE_TTL_MS = 5_000;
const MAX_CACHED_ASSISTANTS = 10_000;

/**
 * The assistants turns read: every turn needs its assistant, so it is kept in this process's
 * memory briefly (a miss too), loaded once for the turns that ask meanwhile, and forgotten when
 * AssistantsService changes or deletes it.
 */
@Injectable()
export class AssistantTurnCache {
  /** `<organization>:<id>` → the assistant, or null for none (a miss is cached too). */
  private readonly cache = new BoundedTtlCache<AssistantEntity | null>(
    MAX_CACHED_ASSISTANTS,
    ASSISTANT_CACHE_TTL_MS,
  );
  private readonly loads = new SharedLoads<AssistantEntity | null>();

  constructor(private readonly repository: AssistantsRepository) {}

  /** The assistant of this organization, or null. */
  async find(organizationId: string, id: string): Promise<AssistantEntity | null> {
    const cacheKey = `${organizationId}:${id}`;
    const cached = this.cache.get(cacheKey);
    if (cached !== undefined) return cached;
    return this.loads.run(
      cacheKey,
      () => this.repository.findForOrganization(organizationId, id),
      (assistant) => this.cache.set(cacheKey, assistant),
    );
  }

  /**
   * This process forgets an assistant at once (other replicas within the TTL), and again once
   * `manager`'s transaction commits: a lookup before the commit reads the old row and is kept.
   */
  forget(organizationId: string, id: string, manager?: EntityManager): void {
    const cacheKey = `${organizationId}:${id}`;
    const forgetNow = () => {
      this.cache.delete(cacheKey);
      this.loads.forget(cacheKey);
    };
    forgetNow();
    afterCommit(manager, forgetNow);
  }
}
