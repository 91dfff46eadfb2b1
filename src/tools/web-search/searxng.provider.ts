import { readCapped, type GuardedFetch } from '../ssrf/guarded-fetch.js';
import type { WebSearchConfig } from '../tool-config.js';
import { ToolFailure } from '../tool-runtime.js';
import {
  endpoint,
  plainText,
  SEARCH_RESPONSE_MAX_BYTES,
  type WebSearchProvider,
  type WebSearchResult,
} from './web-search.provider.js';

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
    });
    if (!response.ok) {
      await response.body?.cancel();
      throw new ToolFailure(
        response.status === 403
          ? 'The search engine refused JSON output (HTTP 403); its json format is not enabled'
          : `The search engine answered HTTP ${response.status}`,
      );
    }
    const { text } = await readCapped(response, SEARCH_RESPONSE_MAX_BYTES);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ToolFailure('The search engine did not answer with JSON');
    }
    const results = (body as { results?: unknown }).results;
    if (!Array.isArray(results)) throw new ToolFailure('The search engine answered without a result list');
    return results
      .map((item: Record<string, unknown>) => ({
        title: plainText(item?.title),
        url: typeof item?.url === 'string' ? item.url : '',
        snippet: plainText(item?.content),
      }))
      .filter((result) => result.url.length > 0)
      .slice(0, options.maxResults);
  }
}
