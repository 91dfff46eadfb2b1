import { readCapped, type GuardedFetch } from '../ssrf/guarded-fetch.js';
import type { WebSearchConfig } from '../tool-config.js';
import { requireSecret, ToolFailure } from '../tool-runtime.js';
import {
  endpoint,
  plainText,
  SEARCH_RESPONSE_MAX_BYTES,
  type WebSearchProvider,
  type WebSearchResult,
} from './web-search.provider.js';

/** Brave answers at most 20 web results per request. */
const BRAVE_MAX_COUNT = 20;

/**
 * The Brave Search API: `GET /res/v1/web/search?q=…&count=…` with the subscription token in
 * `X-Subscription-Token`, answering `{web:{results:[{title,url,description}]}}`.
 */
export class BraveSearchProvider implements WebSearchProvider {
  constructor(
    private readonly config: Extract<WebSearchConfig, { provider: 'brave' }>,
    private readonly http: GuardedFetch,
    private readonly secrets: Readonly<Record<string, string | undefined>>,
  ) {}

  async search(
    query: string,
    options: { maxResults: number; signal: AbortSignal },
  ): Promise<WebSearchResult[]> {
    const token = requireSecret(this.secrets, this.config.apiKeyEnv);
    const url = endpoint(this.config.baseUrl, 'res/v1/web/search');
    url.searchParams.set('q', query);
    url.searchParams.set('count', String(Math.min(options.maxResults, BRAVE_MAX_COUNT)));
    const response = await this.http.request(url, {
      headers: { accept: 'application/json', 'x-subscription-token': token },
      sensitiveHeaders: ['x-subscription-token'],
      signal: options.signal,
    });
    if (!response.ok) {
      await response.body?.cancel();
      throw new ToolFailure(
        response.status === 429
          ? 'The search provider is rate limiting requests (HTTP 429); try again later'
          : `The search provider answered HTTP ${response.status}`,
      );
    }
    const { text } = await readCapped(response, SEARCH_RESPONSE_MAX_BYTES);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ToolFailure('The search provider did not answer with JSON');
    }
    const results = (body as { web?: { results?: unknown } }).web?.results ?? [];
    if (!Array.isArray(results)) throw new ToolFailure('The search provider answered without a result list');
    return results
      .map((item: Record<string, unknown>) => ({
        title: plainText(item?.title),
        url: typeof item?.url === 'string' ? item.url : '',
        snippet: plainText(item?.description),
      }))
      .filter((result) => result.url.length > 0)
      .slice(0, options.maxResults);
  }
}
