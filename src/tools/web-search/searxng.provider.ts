import type { GuardedFetch } from '../ssrf/guarded-fetch.js';
import type { WebSearchConfig } from '../tool-config.js';
import {
  endpoint,
  readSearchAnswer,
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
    const url = endpoint(this.config.baseUrl, 'search');
    url.searchParams.set('q', query);
    url.searchParams.set('format', 'json');
    if (this.config.language) url.searchParams.set('language', this.config.language);
    const response = await this.http.request(url, {
      headers: { accept: 'application/json' },
      signal: options.signal,
      traceContext: this.config.traceContext,
    });
    return readSearchAnswer(response, SEARXNG_ANSWER, options.maxResults);
  }
}
