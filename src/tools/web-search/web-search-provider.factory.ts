import type { GuardedFetch } from '../ssrf/guarded-fetch.js';
import type { WebSearchConfig } from '../tool-config.js';
import { BraveSearchProvider } from './brave.provider.js';
import { SearxngProvider } from './searxng.provider.js';
import type { WebSearchProvider } from './web-search.provider.js';

/**
 * The engine a web-search tool's config names. Apart from web-search.provider.ts (the contract the
 * engines import), so that no engine imports the file that imports it.
 */
export function createWebSearchProvider(
  config: WebSearchConfig,
  fetch: GuardedFetch,
  secrets: Readonly<Record<string, string | undefined>>,
): WebSearchProvider {
  return config.provider === 'searxng'
    ? new SearxngProvider(config, fetch)
    : new BraveSearchProvider(config, fetch, secrets);
}
