import type { GuardedFetch } from '../ssrf/guarded-fetch.js';
import type { WebSearchConfig } from '../tool-config.js';
import {
  searchEngine,
  type SearchAnswerShape,
  type WebSearchProvider,
  type WebSearchResult,
} from './web-search.provider.js';

const SEARXNG_ANSWER: SearchAnswerShape = {
  source: 'The search engine',
  explainStatus: (status) =>
    status === 403
      ? 'The search engine refused JSON output (HTTP 403); its json format is not enabled'
      : undefined,
  results: (body) => (body as { results?: unknown }).results,
  snippetField: 'content',
};

/**
 * SearXNG's JSON API: `GET <base>/search?q=…&format=json` answering `{results:[{title,url,content}]}`.
 * The instance must list `json` under `search.formats` in its settings, or it answers 403.
 */
export class SearxngProvider implements WebSearchProvider {
  constructor(
    private readonly config: Extract<WebSearchConfig, { provider: 'searxng' }>,
    private readonly http: GuardedFetch,
  ) {}

  async search(
    query: string,
    options: { maxResults: number; signal: AbortSignal },
  ): Promise<WebSearchResult[]> {
    const params = { q: query, format: 'json', language: this.config.language || undefined };
    return searchEngine(this.http, this.config, { path: 'search', params }, SEARXNG_ANSWER, options);
  }
}
