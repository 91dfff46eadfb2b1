import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { SsrfPolicy } from '../../common/network/ssrf-policy.js';
import { GuardedFetch } from './guarded-fetch.js';

const MAX_POOLS = 256;

/**
 * One guarded client (and its connection pool) per SSRF policy: an organization's allowlist,
 * with the deployment's for configuration the platform wrote (TenantConfigPolicy's `policyKey`).
 */
@Injectable()
export class GuardedFetchPool implements OnModuleDestroy {
  private readonly clients = new Map<string, GuardedFetch>();

  for(key: string, policy: SsrfPolicy): GuardedFetch {
    let client = this.clients.get(key);
    if (!client) {
      if (this.clients.size >= MAX_POOLS) {
        const [[oldestKey, oldest]] = this.clients;
        this.clients.delete(oldestKey);
        // Requests in flight keep their connections: close() lets them finish.
        void oldest.close();
      }
      client = new GuardedFetch(policy);
      this.clients.set(key, client);
    }
    return client;
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all([...this.clients.values()].map((client) => client.close()));
  }
}
