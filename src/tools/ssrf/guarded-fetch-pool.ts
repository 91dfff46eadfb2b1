import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { ClosingLru } from '../../common/cache/closing-lru.js';
import type { SsrfPolicy } from '../../common/network/ssrf-policy.js';
import { GuardedFetch } from './guarded-fetch.js';

const MAX_POOLS = 256;

/**
 * One guarded client (and its connection pool) per SSRF policy: an organization's allowlist,
 * with the deployment's for configuration the platform wrote (TenantConfigPolicy's `policyKey`).
 */
@Injectable()
export class GuardedFetchPool implements OnModuleDestroy {
  // Requests in flight keep their connections: close() lets them finish.
  private readonly clients = new ClosingLru<GuardedFetch>(
    MAX_POOLS,
    (client) => void client.close().catch(() => undefined),
  );

  for(key: string, policy: SsrfPolicy): GuardedFetch {
    return this.clients.get(key) ?? this.clients.add(key, new GuardedFetch(policy));
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all([...this.clients.values()].map((client) => client.close()));
  }
}
