import { AsyncLocalStorage } from 'node:async_hooks';

/** Who wrote a model or tool configuration: the platform, or an organization's admin. */
export type ConfigAuthorKind = 'platform' | 'organization';

export type ConfigAuthor = { kind: 'platform' } | { kind: 'organization'; organizationId: string };

const PLATFORM: ConfigAuthor = { kind: 'platform' };
const authors = new AsyncLocalStorage<ConfigAuthor>();

/**
 * Runs `work` (a write through the services the CLI, `apply` and the admin API share) as
 * `author`. The admin API runs every write of an organization's admin key this way, so the one
 * check in TenantConfigPolicy sees who writes without each service passing it along.
 */
export function writingAs<T>(author: ConfigAuthor, work: () => Promise<T>): Promise<T> {
  return authors.run(author, work);
}

/** The author of the write in progress; outside `writingAs` (the CLI, the Helm apply Job), the platform. */
export function currentAuthor(): ConfigAuthor {
  return authors.getStore() ?? PLATFORM;
}
