import type { WebSearchSource } from '../server-tool.js';
import { readCapped, type GuardedFetch } from '../ssrf/guarded-fetch.js';
import { ToolFailure } from '../tool-runtime.js';

export type WebSearchResult = WebSearchSource;

/** One search engine. Failures are thrown as ToolFailure with a sentence the model can read. */
export interface WebSearchProvider {
  search(query: string, options: { maxResults: number; signal: AbortSignal }): Promise<WebSearchResult[]>;
}

/** Most bytes of a search engine's answer that are read; result pages are far smaller. */
export const SEARCH_RESPONSE_MAX_BYTES = 2 * 1024 * 1024;

/** How one engine's JSON answer differs from another's, and how its failures read. */
export interface SearchAnswerShape {
  /** `The search provider` or `The search engine`: the subject of every failure sentence. */
  source: string;
  /** A clearer sentence for a status this engine is known to answer, else undefined. */
  explainStatus(status: number): string | undefined;
  /** The result list inside the parsed body (anything: it is checked). */
  results(body: unknown): unknown;
  /** The field of a result that holds its snippet. */
  snippetField: string;
}

/**
 * Turns an engine's HTTP answer into at most `maxResults` results with a URL, or throws a
 * ToolFailure naming what went wrong (status, not JSON, no result list).
 */
async function readSearchAnswer(
  response: Response,
  shape: SearchAnswerShape,
  maxResults: number,
): Promise<WebSearchResult[]> {
  if (!response.ok) {
    await response.body?.cancel();
    throw new ToolFailure(
      shape.explainStatus(response.status) ?? `${shape.source} answered HTTP ${response.status}`,
    );
  }
  const { text } = await readCapped(response, SEARCH_RESPONSE_MAX_BYTES);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ToolFailure(`${shape.source} did not answer with JSON`);
  }
  const results = shape.results(body);
  if (!Array.isArray(results)) throw new ToolFailure(`${shape.source} answered without a result list`);
  return results
    .map((item: Record<string, unknown>) => ({
      title: plainText(item?.title),
      url: typeof item?.url === 'string' ? item.url : '',
      snippet: plainText(item?.[shape.snippetField]),
    }))
    .filter((result) => result.url.length > 0)
    .slice(0, maxResults);
}

/** One GET of an engine's JSON search API: its path under the configured base, and what it takes. */
export interface SearchRequest {
  path: string;
  /** The query string; a parameter without a value is left out. */
  params: Record<string, string | undefined>;
  headers?: Record<string, string>;
  /** Headers kept from any redirect's target and any log (credentials). */
  sensitiveHeaders?: readonly string[];
}

/** Asks an engine (its configured base URL and trace opt-in) and reads its answer (readSearchAnswer). */
export async function searchEngine(
  http: GuardedFetch,
  config: { baseUrl: string; traceContext?: boolean },
  request: SearchRequest,
  shape: SearchAnswerShape,
  options: { maxResults: number; signal: AbortSignal },
): Promise<WebSearchResult[]> {
  const url = endpoint(config.baseUrl, request.path);
  for (const [name, value] of Object.entries(request.params)) {
    if (value !== undefined) url.searchParams.set(name, value);
  }
  const response = await http.request(url, {
    headers: { accept: 'application/json', ...request.headers },
    sensitiveHeaders: request.sensitiveHeaders,
    signal: options.signal,
    traceContext: config.traceContext,
  });
  return readSearchAnswer(response, shape, options.maxResults);
}

/** `base` with a trailing slash, so relative paths resolve beneath it rather than beside it. */
function endpoint(base: string, path: string): URL {
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
