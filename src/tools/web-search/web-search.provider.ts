import type { WebSearchConfig } from '../tool-config.js';
import type { GuardedFetch } from '../ssrf/guarded-fetch.js';
import { BraveSearchProvider } from './brave.provider.js';
import { SearxngProvider } from './searxng.provider.js';

export interface WebSearchResult {
  title: string;
  url: string;
  snippet: string;
}

/** One search engine. Failures are thrown as ToolFailure with a sentence the model can read. */
export interface WebSearchProvider {
  search(query: string, options: { maxResults: number; signal: AbortSignal }): Promise<WebSearchResult[]>;
}

/** Most bytes of a search engine's answer that are read; result pages are far smaller. */
export const SEARCH_RESPONSE_MAX_BYTES = 2 * 1024 * 1024;

export function createWebSearchProvider(
  config: WebSearchConfig,
  fetch: GuardedFetch,
  secrets: Readonly<Record<string, string | undefined>>,
): WebSearchProvider {
  return config.provider === 'searxng'
    ? new SearxngProvider(config, fetch)
    : new BraveSearchProvider(config, fetch, secrets);
}

/** `base` with a trailing slash, so relative paths resolve beneath it rather than beside it. */
export function endpoint(base: string, path: string): URL {
  return new URL(path, base.endsWith('/') ? base : `${base}/`);
}

/** Plain text of a snippet: engines mark matches with tags such as <strong>. */
export function plainText(value: unknown): string {
  if (typeof value !== 'string') return '';
  return value
    .replace(/<[^>]*>/g, '')
    .replace(/&(amp|lt|gt|quot|#39);/g, (_m, entity: string) =>
      entity === 'amp' ? '&' : entity === 'lt' ? '<' : entity === 'gt' ? '>' : entity === 'quot' ? '"' : "'",
    )
    .replace(/\s+/g, ' ')
    .trim();
}
