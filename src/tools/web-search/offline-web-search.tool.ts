import { Injectable, Logger } from '@nestjs/common';
import { describeUnexpected } from '../../common/errors/all-exceptions.filter.js';
import { isObject, refuse, takeOneTool } from '../../common/request-schema/request-field.js';
import type { ServerTool, ToolResult } from '../server-tool.js';
import { WebSearchCacheRepository } from './web-search-cache.repository.js';
import { webSearchDefinition } from './web-search.tool.js';

/** `tools: [{type: "web_search", external_web_access: false, …}]` of POST /v1/responses, parsed. */
export interface WebSearchRequest {
  maxResults: number;
  /** `filters.allowed_domains`, lower-cased hosts; null: any. */
  domains: string[] | null;
  /** The tool as the Response echoes it. */
  echo: Record<string, unknown>;
}

const TYPES = new Set(['web_search', 'web_search_2025_08_26']);
const KNOWN = ['type', 'external_web_access', 'search_context_size', 'filters', 'user_location'];
/** How many cached results each `search_context_size` gives the model. */
const RESULTS_BY_CONTEXT: Record<string, number> = { low: 3, medium: 5, high: 10 };
const MAX_DOMAINS = 100;
const DOMAIN = /^(?=.{1,253}$)[a-z0-9-]+(\.[a-z0-9-]+)*$/;

/**
 * Parses one `web_search` tool of a request. Only the offline form is served here
 * (`external_web_access: false`): live search is a tool configured on the assistant, so a request
 * asking for live access is refused by name rather than quietly searching the cache.
 */
export function parseWebSearchTool(raw: Record<string, unknown>, path: string): WebSearchRequest {
  for (const key of Object.keys(raw)) if (!KNOWN.includes(key)) refuse(`Unknown parameter: ${path}.${key}`);
  if (raw.external_web_access !== false) {
    refuse(
      `${path}.external_web_access: a request's web_search runs offline only (external_web_access: false, ` +
        "served from the organization's cache of earlier searches); live web search is a web_search tool " +
        'configured on the assistant, which answers without declaring it in the request',
    );
  }
  if (raw.user_location !== undefined && raw.user_location !== null) {
    refuse(`${path}.user_location: cached results are not localized; leave user_location out`);
  }
  const echo: Record<string, unknown> = { type: 'web_search', external_web_access: false };
  let maxResults = RESULTS_BY_CONTEXT.medium;
  if (raw.search_context_size !== undefined && raw.search_context_size !== null) {
    const size = raw.search_context_size;
    if (typeof size !== 'string' || !(size in RESULTS_BY_CONTEXT))
      refuse(`${path}.search_context_size must be "low", "medium" or "high"`);
    maxResults = RESULTS_BY_CONTEXT[size];
    echo.search_context_size = size;
  }
  let domains: string[] | null = null;
  if (raw.filters !== undefined && raw.filters !== null) {
    if (!isObject(raw.filters)) refuse(`${path}.filters must be an object`);
    for (const key of Object.keys(raw.filters))
      if (key !== 'allowed_domains') refuse(`Unknown parameter: ${path}.filters.${key}`);
    const allowed = raw.filters.allowed_domains;
    if (allowed !== undefined && allowed !== null) {
      if (!Array.isArray(allowed) || allowed.length === 0 || allowed.length > MAX_DOMAINS)
        refuse(`${path}.filters.allowed_domains must hold 1 to ${MAX_DOMAINS} domains`);
      domains = allowed.map((domain, index) => {
        // `https://example.com/` and `example.com` both name the host example.com.
        const host =
          typeof domain === 'string'
            ? domain
                .trim()
                .toLowerCase()
                .replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
                .replace(/\/.*$/, '')
            : '';
        if (!DOMAIN.test(host)) refuse(`${path}.filters.allowed_domains[${index}] is not a domain`);
        return host;
      });
      echo.filters = { allowed_domains: domains };
    }
  }
  return { maxResults, domains, echo };
}

/** Pulls the `web_search` tool (at most one) out of a request's `tools`; the rest are returned as they were. */
export function splitWebSearchTool(tools: unknown): { webSearch: WebSearchRequest | null; rest: unknown } {
  const { taken, rest } = takeOneTool(
    tools,
    (type) => TYPES.has(type),
    parseWebSearchTool,
    'a request takes one web_search tool',
  );
  return { webSearch: taken, rest };
}

/**
 * The request's offline `web_search` as a server tool (docs/knowledge.md, "Offline web search"):
 * the model calls it with a query and reads the best results the organization's earlier live
 * searches returned. Nothing leaves the service. A failed lookup is a failed call; the turn goes on.
 */
@Injectable()
export class OfflineWebSearchTools {
  private readonly logger = new Logger('OfflineWebSearch');

  constructor(private readonly cache: WebSearchCacheRepository) {}

  tool(request: WebSearchRequest): ServerTool {
    return {
      kind: 'web_search',
      definition: webSearchDefinition(
        'web_search',
        "Search the organization's cache of earlier web search results (no live web access). Returns titles, URLs and snippets; cite the URLs you use.",
      ),
      execute: async (args, context): Promise<ToolResult> => {
        const query = typeof args.query === 'string' ? args.query.trim() : '';
        if (!query) return { ok: false, error: 'The "query" argument must be a non-empty string' };
        try {
          const results = await this.cache.search(
            context.organizationId,
            query,
            request.maxResults,
            request.domains,
          );
          return {
            ok: true,
            output: JSON.stringify({ query, source: 'cache', results }),
            webSearch: { query, results },
          };
        } catch (error) {
          this.logger.warn({ ...describeUnexpected(error), msg: 'offline web search failed' });
          return { ok: false, error: 'The cached web search failed; answer without it, or try again' };
        }
      },
    };
  }
}
