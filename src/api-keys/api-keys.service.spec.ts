import type { DataSource, EntityManager } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { TransactionalConnection } from '../database/transactional-connection.js';
import type { ApiKeysRepository } from './api-keys.repository.js';
import { ApiKeyAuthenticator } from './api-key-authenticator.js';
import { ApiKeysService } from './api-keys.service.js';

const KEY = `swb_${'a'.repeat(43)}`;

function service() {
  let lookups = 0;
  const repository = {
    findActiveByHash: async () => {
      lookups++;
      await new Promise((resolve) => setTimeout(resolve, 10));
      return { id: 'key-1', organizationId: 'org-1', scopes: ['assistant'] };
    },
    touchLastUsed: () => Promise.resolve(),
  } as unknown as ApiKeysRepository;
  const config = { auth: { apiKeyCacheTtlMs: 5_000 } } as AppConfig;
  return { keys: new ApiKeyAuthenticator(repository, config), lookups: () => lookups };
}

describe('ApiKeyAuthenticator.authenticate', () => {
  it('looks a key up once for the requests that arrive while its lookup runs', async () => {
    const { keys, lookups } = service();
    const principals = await Promise.all(Array.from({ length: 8 }, () => keys.authenticate(KEY)));
    expect(principals.every((principal) => principal?.organizationId === 'org-1')).toBe(true);
    expect(lookups()).toBe(1);
    await keys.authenticate(KEY);
    expect(lookups()).toBe(1);
  });
});

describe('ApiKeysService.revoke', () => {
  it('does not keep a lookup made between the revocation and its commit', async () => {
    let committed = false;
    const repository = {
      // Another connection sees the key active until the revoking transaction commits.
      findActiveByHash: () =>
        Promise.resolve(committed ? null : { id: 'key-1', organizationId: 'org-1', scopes: ['assistant'] }),
      revoke: () => Promise.resolve(true),
      touchLastUsed: () => Promise.resolve(),
    } as unknown as ApiKeysRepository;
    const config = { auth: { apiKeyCacheTtlMs: 5_000 } } as AppConfig;
    const authenticator = new ApiKeyAuthenticator(repository, config);
    const keys = new ApiKeysService(repository, authenticator, config);
    const dataSource = {
      transaction: async (work: (manager: EntityManager) => Promise<unknown>) => {
        const value = await work({} as EntityManager);
        committed = true;
        return value;
      },
    } as unknown as DataSource;

    await new TransactionalConnection(dataSource).withTransaction(async (manager) => {
      expect(await keys.revoke('org-1', 'key-1', manager)).toBe(true);
      expect(await authenticator.authenticate(KEY)).not.toBeNull();
    });
    expect(await authenticator.authenticate(KEY)).toBeNull();
  });
});
