import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import type { ConfigAccess } from '../../tenant-config/tenant-config.policy.js';
import type { ToolEntity } from '../entities/tool.entity.js';
import type { ResolveOptions, ServerTool, ServerToolDefinition, ToolResult } from '../server-tool.js';
import { GuardedFetchPool } from '../ssrf/guarded-fetch-pool.js';
import { TOOL_NAME, type McpServerConfig } from '../tool-config.js';
import {
  deadline,
  describeFailure,
  guardedTool,
  redactSecrets,
  resolveHeaders,
  signInRequired,
  toolLimits,
  ToolFailure,
} from '../tool-runtime.js';
import { McpClientService, type RemoteTool } from './mcp-client.service.js';
import type { McpTarget } from './mcp-session-opener.js';

/**
 * The tools of a catalogue's `mcp` row: every tool its server lists, filtered and prefixed as the
 * row declares, each calling the server through the shared MCP client.
 */
@Injectable()
export class McpServerTools {
  // The catalogue's logger: these lines were the catalogue's before it was split.
  private readonly logger = new Logger('ToolCatalog');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly guards: GuardedFetchPool,
    private readonly mcp: McpClientService,
  ) {}

  async tools(row: ToolEntity, access: ConfigAccess, options: ResolveOptions): Promise<ServerTool[]> {
    const config = row.config as McpServerConfig;
    const plugin = row.plugin ?? null;
    const limits = toolLimits(this.config.tools, config.timeoutMs);
    // A server that cannot be listed stays visible as one tool, so the model can still reach for
    // it and learn why it fails (or the user is asked to sign in).
    const placeholder = (reason: string, result: ToolResult) => [
      guardedTool(
        { kind: 'mcp', definition: placeholderDefinition(row, reason), plugin },
        limits,
        this.logger,
        () => Promise.resolve(result),
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
        this.mcpTarget(row, config, access, options, limits.timeoutMs),
        deadline(turnSignal, limits.timeoutMs),
      );
    } catch (error) {
      if (error instanceof ToolFailure && error.unauthorized && plugin && signIn) {
        return placeholder(`requires signing in to ${plugin.name}`, signIn);
      }
      const reason =
        describeFailure(error, turnSignal, limits.timeoutMs) ??
        `The MCP server ${row.name} could not be reached`;
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
        guardedTool(
          { kind: 'mcp', definition, plugin },
          limits,
          this.logger,
          async (args, context, signal) => {
            const target = this.mcpTarget(row, config, access, context, limits.timeoutMs);
            const result = await this.mcp.callTool(target, tool.name, args, signal);
            // A server that echoes its request must not put a token into the transcript.
            const text = redactSecrets(result.text, [...target.secretValues, target.bearerToken]);
            return result.isError
              ? { ok: false, error: text || `${name} failed` }
              : { ok: true, output: text };
          },
        ),
      ];
    });
  }

  private mcpTarget(
    row: ToolEntity,
    config: McpServerConfig,
    access: ConfigAccess,
    credentials: ResolveOptions,
    timeoutMs: number,
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
      timeoutMs,
      http: this.guards.for(access.policyKey, access.policy),
      traceContext: config.traceContext,
      secretValues,
    };
  }
}

function placeholderDefinition(row: ToolEntity, reason: string): ServerToolDefinition {
  const about = row.description || `Tools of the ${row.name} service`;
  return {
    name: row.name,
    description: `${about} (currently unavailable: ${reason})`,
    parameters: { type: 'object', properties: {} },
  };
}
