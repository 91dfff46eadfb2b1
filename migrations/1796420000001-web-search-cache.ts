import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The organization's web-search cache (docs/knowledge.md, "Offline web search"): each result a
 * live web search of the organization returned, one row per URL (the latest search wins), with a
 * full-text vector over its title, snippet and query. `web_search` with
 * `external_web_access: false` searches these rows only. The rows go with their organization.
 */
export class WebSearchCache1796420000001 implements MigrationInterface {
  name = 'WebSearchCache1796420000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "web_search_cache" ("organization_id" uuid NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE,
        "url" text NOT NULL, "title" text NOT NULL, "snippet" text NOT NULL, "query" text NOT NULL,
        "searched_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "search_text" tsvector GENERATED ALWAYS AS (to_tsvector('english', "title" || ' ' || "snippet" || ' ' || "query")) STORED,
        CONSTRAINT "PK_web_search_cache" PRIMARY KEY ("organization_id", "url"))`,
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_web_search_cache_search_text" ON "web_search_cache" USING GIN ("search_text")',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_web_search_cache_recent" ON "web_search_cache" ("organization_id", "searched_at")',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE "web_search_cache"');
  }
}
