import type { GuardedFetch } from '../ssrf/guarded-fetch.js';
import type { WebSearchConfig } from '../tool-config.js';
import { redactSecrets, requireSecret } from '../tool-runtime.js';
import {
  searchEngine,
  type SearchAnswerShape,
  type WebSearchProvider,
  type WebSearchResult,
} from './web-search.provider.js';

/** Brave answers at most 20 web results per request. */
const BRAVE_MAX_COUNT = 20;

const BRAVE_ANSWER: SearchAnswerShape = {
  source: 'The search provider',
  explainStatus: (status) =>
    status === 429 ? 'The search provider is rate limiting requests (HTTP 429); try again later' : undefined,
  results: (body) => (body as { web?: { results?: unknown } }).web?.results ?? [],
  snippetField: 'description',
};

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
    const request = {
      path: 'res/v1/web/search',
      params: { q: query, count: String(Math.min(options.maxResults, BRAVE_MAX_COUNT)) },
      headers: { 'x-subscription-token': token },
      sensitiveHeaders: ['x-subscription-token'],
    };
    const results = await searchEngine(this.http, this.config, request, BRAVE_ANSWER, options);
    // A proxy that echoes the request must not put the token in front of the model or in the store.
    return JSON.parse(redactSecrets(JSON.stringify(results), [token])) as WebSearchResult[];
  }
}
