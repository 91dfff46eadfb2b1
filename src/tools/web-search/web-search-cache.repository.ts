import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { WebSearchResult } from './web-search.provider.js';

/**
 * The organization's web-search cache (docs/knowledge.md, "Offline web search"): what its live
 * web searches returned, one row per URL, searched by `web_search` with
 * `external_web_access: false`. Every query takes the organization.
 */
@Injectable()
export class WebSearchCacheRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Keeps a live search's results; a URL seen again takes the newer title, snippet and query. */
  async remember(organizationId: string, query: string, results: WebSearchResult[]): Promise<void> {
    const unique = [...new Map(results.map((result) => [result.url, result])).values()];
    if (unique.length === 0) return;
    const params: unknown[] = [organizationId, query];
    const rows = unique.map((result) => {
      params.push(result.url, result.title, result.snippet);
      const at = params.length;
      return `($1::uuid, $${at - 2}::text, $${at - 1}::text, $${at}::text, $2::text, now())`;
    });
    await this.dataSource.query(
      `INSERT INTO web_search_cache (organization_id, url, title, snippet, query, searched_at)
       VALUES ${rows.join(', ')}
       ON CONFLICT (organization_id, url) DO UPDATE
          SET title = EXCLUDED.title, snippet = EXCLUDED.snippet, query = EXCLUDED.query,
              searched_at = EXCLUDED.searched_at`,
      params,
    );
  }

  /**
   * The `limit` cached results best matching any of the query's words (English stemming, ranked
   * by cover density, newest first among equals); with `domains`, only URLs on those hosts (or
   * their subdomains).
   */
  async search(
    organizationId: string,
    query: string,
    limit: number,
    domains: string[] | null,
  ): Promise<WebSearchResult[]> {
    const params: unknown[] = [organizationId, query, limit];
    let domainFilter = '';
    if (domains) {
      params.push(domains);
      // The URL's host, lower-cased, equal to a domain or ending in ".domain".
      domainFilter = `AND EXISTS (SELECT 1 FROM unnest($4::text[]) AS d
                                   WHERE lower(substring(c.url from '^[a-zA-Z][a-zA-Z0-9+.-]*://([^/:?#]+)')) = d
                                      OR lower(substring(c.url from '^[a-zA-Z][a-zA-Z0-9+.-]*://([^/:?#]+)')) LIKE '%.' || d)`;
    }
    // Any of the query's lexemes (OR), each quoted: the query's text never becomes tsquery syntax.
    const rows = await this.dataSource.query<{ url: string; title: string; snippet: string }[]>(
      `WITH q AS (SELECT (SELECT string_agg(quote_literal(lexeme), ' | ')
                            FROM unnest(tsvector_to_array(to_tsvector('english', $2::text))) AS lexeme)::tsquery AS query)
       SELECT c.url, c.title, c.snippet
         FROM q, web_search_cache c
        WHERE c.organization_id = $1::uuid AND q.query IS NOT NULL AND c.search_text @@ q.query ${domainFilter}
        ORDER BY ts_rank_cd(c.search_text, q.query) DESC, c.searched_at DESC, c.url
        LIMIT $3::integer`,
      params,
    );
    return rows.map((row) => ({ url: row.url, title: row.title, snippet: row.snippet }));
  }
}
