import { Inject, Injectable, Logger } from '@nestjs/common';
import { describeUnexpected } from '../common/errors/all-exceptions.filter.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { ToolEntity } from './entities/tool.entity.js';
import { McpServerTools } from './mcp/mcp-server-tools.service.js';
import { restDefinition, runRestTool } from './rest/rest-tool.js';
import type { ResolveOptions, ServerTool, WebSearchSource } from './server-tool.js';
import { TenantConfigPolicy } from '../tenant-config/tenant-config.policy.js';
import { GuardedFetchPool } from './ssrf/guarded-fetch-pool.js';
import type { RestToolConfig, WebSearchConfig } from './tool-config.js';
import { guardedTool, toolLimits } from './tool-runtime.js';
import { ToolsRepository } from './tools.repository.js';
import { WebSearchCacheRepository } from './web-search/web-search-cache.repository.js';
import { createWebSearchProvider } from './web-search/web-search-provider.factory.js';
import { runWebSearch, webSearchDefinition } from './web-search/web-search.tool.js';

const NO_ROWS: ReadonlyMap<string, ToolEntity> = new Map();

/** Catalogue rows read ahead of use, by tool name. */
export interface LoadedCatalogue {
  organizationId: string;
  rows: ReadonlyMap<string, ToolEntity>;
}

/**
 * Resolves tool names of an organization's catalogue into executors the turn (or the MCP
 * gateway) runs. A `web_search` or `rest` row is one tool; an `mcp` row is every tool its
 * server lists (filtered and prefixed as declared). Executors never throw.
 */
@Injectable()
export class ToolCatalogService {
  private readonly logger = new Logger('ToolCatalog');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: ToolsRepository,
    private readonly policy: TenantConfigPolicy,
    private readonly guards: GuardedFetchPool,
    private readonly mcpServer: McpServerTools,
    private readonly webSearchCache: WebSearchCacheRepository,
  ) {}

  /** The tools named (in that order, unknown names skipped), loaded in one query. */
  async resolve(
    organizationId: string,
    toolNames: readonly string[],
    options: ResolveOptions = {},
  ): Promise<ServerTool[]> {
    return this.resolveLoaded(await this.load(organizationId, toolNames), toolNames, options);
  }

  /**
   * The catalogue rows of these names, in one query (none when there are no names). A turn
   * reads the rows of every agent it may hand over to before its first byte, then builds each
   * agent's tools from them with `resolveLoaded`, which reads no database.
   */
  async load(organizationId: string, toolNames: readonly string[]): Promise<LoadedCatalogue> {
    const names = [...new Set(toolNames)];
    const rows = await this.repository.findByNamesWithPlugins(organizationId, names);
    // No rows (most assistants): one shared empty map, not one per turn held for its whole stream.
    return { organizationId, rows: rows.length > 0 ? new Map(rows.map((row) => [row.name, row])) : NO_ROWS };
  }

  /** The tools named (in that order, names not in `catalogue` skipped), built from loaded rows. */
  resolveLoaded(
    catalogue: LoadedCatalogue,
    toolNames: readonly string[],
    options: ResolveOptions = {},
  ): Promise<ServerTool[]> {
    const names = [...new Set(toolNames)];
    const unknown = names.filter((name) => !catalogue.rows.has(name));
    if (unknown.length > 0)
      this.logger.debug({
        msg: 'tool names not in the catalogue',
        organizationId: catalogue.organizationId,
        unknown,
      });
    return this.build(
      names.flatMap((name) => catalogue.rows.get(name) ?? []),
      options,
    );
  }

  /** Every tool of the organization (the MCP gateway exposes a chosen set of these). */
  async resolveAll(organizationId: string, options: ResolveOptions = {}): Promise<ServerTool[]> {
    return this.build(await this.repository.listWithPlugins(organizationId), options);
  }

  private async build(rows: ToolEntity[], options: ResolveOptions): Promise<ServerTool[]> {
    const groups = await Promise.all(rows.map((row) => this.toolsOf(row, options)));
    const seen = new Set<string>();
    const tools: ServerTool[] = [];
    for (const tool of groups.flat()) {
      // Two servers exposing one name: the model could not tell them apart; the first wins.
      if (seen.has(tool.definition.name)) {
        this.logger.warn({ msg: 'duplicate tool name skipped', tool: tool.definition.name });
        continue;
      }
      seen.add(tool.definition.name);
      tools.push(tool);
    }
    return tools;
  }

  /**
   * A row's executors. What its config may read and reach depends on its organization and on who
   * wrote it (TenantConfigPolicy): a secret it may not read is "not set", a host it may not reach
   * is refused, and nothing is sent.
   */
  private async toolsOf(row: ToolEntity, options: ResolveOptions): Promise<ServerTool[]> {
    const access = await this.policy.access(row.organizationId, row.configuredBy);
    const http = this.guards.for(access.policyKey, access.policy);
    if (row.kind === 'web_search') {
      const config = row.config as WebSearchConfig;
      const provider = createWebSearchProvider(config, http, access.secrets);
      return [
        guardedTool(
          {
            kind: 'web_search',
            definition: webSearchDefinition(row.name, row.description),
            plugin: row.plugin ?? null,
          },
          toolLimits(this.config.tools, config.timeoutMs),
          this.logger,
          async (args, context, signal) => {
            const result = await runWebSearch(provider, args, config.maxResults, signal);
            if (result.ok && result.webSearch) await this.remember(context.organizationId, result.webSearch);
            return result;
          },
        ),
      ];
    }
    if (row.kind === 'rest') {
      const config = row.config as RestToolConfig;
      return [
        guardedTool(
          {
            kind: 'rest',
            definition: restDefinition(row.name, row.description, config),
            plugin: row.plugin ?? null,
          },
          toolLimits(this.config.tools, config.timeoutMs),
          this.logger,
          (args, context, signal) =>
            runRestTool(
              config,
              row.plugin ?? null,
              { args, userTokens: context.userTokens, signal },
              http,
              access.secrets,
            ),
        ),
      ];
    }
    return this.mcpServer.tools(row, access, options);
  }

  /**
   * Keeps a live search's results for offline search (`external_web_access: false`). A cache
   * that cannot be written loses those results only; the search itself has succeeded.
   */
  private async remember(
    organizationId: string,
    search: { query: string; results: WebSearchSource[] },
  ): Promise<void> {
    try {
      await this.webSearchCache.remember(organizationId, search.query, search.results);
    } catch (error) {
      this.logger.warn({ ...describeUnexpected(error), msg: 'web search cache not written' });
    }
  }
}
