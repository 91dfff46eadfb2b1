import { Inject, Injectable, Logger } from '@nestjs/common';
import { describeUnexpected } from '../common/errors/all-exceptions.filter.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { ToolEntity } from './entities/tool.entity.js';
import { McpClientService, type McpTarget, type RemoteTool } from './mcp/mcp-client.service.js';
import { restDefinition, runRestTool } from './rest/rest-tool.js';
import type {
  ServerTool,
  ServerToolDefinition,
  ServerToolKind,
  ToolResult,
  WebSearchSource,
} from './server-tool.js';
import { TenantConfigPolicy, type ConfigAccess } from '../tenant-config/tenant-config.policy.js';
import { GuardedFetchPool } from './ssrf/guarded-fetch-pool.js';
import { TOOL_NAME, type McpServerConfig, type RestToolConfig, type WebSearchConfig } from './tool-config.js';
import {
  deadline,
  describeFailure,
  guardedTool,
  redactSecrets,
  resolveHeaders,
  signInRequired,
  ToolFailure,
  type ToolWork,
} from './tool-runtime.js';
import { ToolsRepository } from './tools.repository.js';
import { WebSearchCacheRepository } from './web-search/web-search-cache.repository.js';
import { createWebSearchProvider } from './web-search/web-search-provider.factory.js';
import { runWebSearch, webSearchDefinition } from './web-search/web-search.tool.js';

/** The request's credentials, needed already to list the tools of MCP servers. */
export interface ResolveOptions {
  /** `x-user-token`. */
  userToken?: string;
  /** `x-user-tokens`. */
  userTokens?: Record<string, string>;
  signal?: AbortSignal;
}

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
    private readonly mcp: McpClientService,
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
    return { organizationId, rows: new Map(rows.map((row) => [row.name, row])) };
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
        this.executor(
          row,
          'web_search',
          webSearchDefinition(row.name, row.description),
          config.timeoutMs,
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
        this.executor(
          row,
          'rest',
          restDefinition(row.name, row.description, config),
          config.timeoutMs,
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
    return this.mcpTools(row, access, options);
  }

  private async mcpTools(
    row: ToolEntity,
    access: ConfigAccess,
    options: ResolveOptions,
  ): Promise<ServerTool[]> {
    const config = row.config as McpServerConfig;
    const plugin = row.plugin ?? null;
    const timeoutMs = config.timeoutMs ?? this.config.tools.timeoutMs;
    // A server that cannot be listed stays visible as one tool, so the model can still reach for
    // it and learn why it fails (or the user is asked to sign in).
    const placeholder = (reason: string, result: ToolResult) => [
      this.executor(row, 'mcp', this.placeholderDefinition(row, reason), config.timeoutMs, () =>
        Promise.resolve(result),
      ),
    ];
    const signIn = plugin?.oauth ? signInRequired(plugin) : undefined;
    if (plugin && signIn && !options.userTokens?.[plugin.oauth?.providerId ?? '']) {
      return placeholder(`requires signing in to ${plugin.name}`, signIn);
    }
    const turnSignal = options.signal ?? new AbortController().signal;
    let remote: RemoteTool[];
    try {
      remote = await this.mcp.listTools(
        this.mcpTarget(row, config, access, options),
        deadline(turnSignal, timeoutMs),
      );
    } catch (error) {
      if (error instanceof ToolFailure && error.unauthorized && plugin && signIn) {
        return placeholder(`requires signing in to ${plugin.name}`, signIn);
      }
      const reason =
        describeFailure(error, turnSignal, timeoutMs) ?? `The MCP server ${row.name} could not be reached`;
      this.logger.warn({ msg: 'could not list MCP tools', tool: row.name, reason });
      return placeholder(reason, { ok: false, error: reason });
    }
    const prefix = config.toolPrefix ?? `${row.name}_`;
    const allowed = config.allowedTools ? new Set(config.allowedTools) : undefined;
    return remote.flatMap((tool) => {
      if (allowed && !allowed.has(tool.name)) return [];
      const name = `${prefix}${tool.name}`;
      if (!TOOL_NAME.test(name)) {
        this.logger.warn({ msg: 'MCP tool name unusable by models; skipped', server: row.name, tool: name });
        return [];
      }
      const definition = { name, description: tool.description, parameters: tool.inputSchema };
      return [
        this.executor(row, 'mcp', definition, config.timeoutMs, async (args, context, signal) => {
          const target = this.mcpTarget(row, config, access, context);
          const result = await this.mcp.callTool(target, tool.name, args, signal);
          // A server that echoes its request must not put a token into the transcript.
          const text = redactSecrets(result.text, [...target.secretValues, target.bearerToken]);
          return result.isError ? { ok: false, error: text || `${name} failed` } : { ok: true, output: text };
        }),
      ];
    });
  }

  private mcpTarget(
    row: ToolEntity,
    config: McpServerConfig,
    access: ConfigAccess,
    credentials: ResolveOptions,
  ): McpTarget & { secretValues: string[] } {
    const { headers, sensitive, secretValues } = resolveHeaders(config.headers, access.secrets);
    const oauth = row.plugin?.oauth;
    return {
      serverId: row.id,
      version: row.updatedAt.getTime(),
      name: row.name,
      url: config.url,
      transport: config.transport,
      headers,
      sensitiveHeaders: sensitive,
      // The plugin's provider token when the server is in an OAuth plugin, else the forwarded x-user-token.
      bearerToken: oauth
        ? credentials.userTokens?.[oauth.providerId]
        : config.forwardUserToken
          ? credentials.userToken
          : undefined,
      timeoutMs: config.timeoutMs ?? this.config.tools.timeoutMs,
      http: this.guards.for(access.policyKey, access.policy),
      traceContext: config.traceContext,
      secretValues,
    };
  }

  private placeholderDefinition(row: ToolEntity, reason: string): ServerToolDefinition {
    const about = row.description || `Tools of the ${row.name} service`;
    return {
      name: row.name,
      description: `${about} (currently unavailable: ${reason})`,
      parameters: { type: 'object', properties: {} },
    };
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

  /** The row's tool, with this replica's time limit (unless the row sets one) and output cap. */
  private executor(
    row: ToolEntity,
    kind: ServerToolKind,
    definition: ServerToolDefinition,
    ownTimeoutMs: number | undefined,
    work: ToolWork,
  ): ServerTool {
    const limits = {
      timeoutMs: ownTimeoutMs ?? this.config.tools.timeoutMs,
      maxOutputBytes: this.config.tools.maxOutputBytes,
    };
    return guardedTool({ kind, definition, plugin: row.plugin ?? null }, limits, this.logger, work);
  }
}
