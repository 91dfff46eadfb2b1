import { Injectable, Logger } from '@nestjs/common';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Request, Response } from 'express';
import { describeUnexpected } from '../common/errors/all-exceptions.filter.js';
import type { ServerTool } from '../tools/server-tool.js';
import { ToolCatalogService } from '../tools/tool-catalog.service.js';
import type { McpGatewayEntity } from './entities/mcp-gateway.entity.js';
import { ALL_TOOLS } from './mcp-gateways.service.js';

const SERVER_VERSION = '0.1.0';

/**
 * The SDK's server, loaded by the first gateway request: a replica that serves no MCP gateway
 * never holds it (with its schemas, about 7 MiB of heap).
 */
let serverSdk: Promise<ServerSdk> | undefined;
type ServerSdk = Awaited<ReturnType<typeof importServerSdk>>;

async function importServerSdk() {
  // One after another: modules importing shared dependencies at once fail to link under Jest's VM.
  const server = await import('@modelcontextprotocol/sdk/server/index.js');
  const streamable = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
  const types = await import('@modelcontextprotocol/sdk/types.js');
  return {
    Server: server.Server,
    StreamableHTTPServerTransport: streamable.StreamableHTTPServerTransport,
    CallToolRequestSchema: types.CallToolRequestSchema,
    ListToolsRequestSchema: types.ListToolsRequestSchema,
    ErrorCode: types.ErrorCode,
    McpError: types.McpError,
  };
}

/**
 * The MCP server behind a gateway, stateless: every POST gets a fresh Server and Streamable HTTP
 * transport without session ids, so any replica answers any request. Replies are plain JSON
 * (no SSE stream), which proxies pass through without buffering surprises.
 */
@Injectable()
export class McpGatewayServerService {
  private readonly logger = new Logger('McpGateway');

  constructor(private readonly catalogue: ToolCatalogService) {}

  async handle(gateway: McpGatewayEntity, req: Request, res: Response): Promise<void> {
    const sdk = await (serverSdk ??= importServerSdk());
    const disconnected = new AbortController();
    const server = this.buildServer(sdk, gateway, disconnected.signal);
    const transport = new sdk.StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      // Closed before the reply was written: the client went away; stop its tool calls.
      if (!res.writableFinished) disconnected.abort();
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  }

  private buildServer(sdk: ServerSdk, gateway: McpGatewayEntity, disconnected: AbortSignal): Server {
    const { ErrorCode, McpError } = sdk;
    const server = new sdk.Server(
      { name: 'switchboard', title: `Switchboard MCP gateway ${gateway.name}`, version: SERVER_VERSION },
      { capabilities: { tools: { listChanged: false } } },
    );
    // Loaded only for the requests that need them, once per request.
    let tools: Promise<ServerTool[]> | undefined;
    const loadTools = () => (tools ??= this.toolsOf(sdk, gateway, disconnected));

    server.setRequestHandler(sdk.ListToolsRequestSchema, async () => ({
      tools: (await loadTools()).map(toMcpTool),
    }));

    server.setRequestHandler(sdk.CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
      const { name } = request.params;
      const tool = (await loadTools()).find((candidate) => candidate.definition.name === name);
      if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
      const started = Date.now();
      let result;
      try {
        result = await tool.execute(request.params.arguments ?? {}, {
          organizationId: gateway.organizationId,
          signal: AbortSignal.any([extra.signal, disconnected]),
        });
      } catch (error) {
        // Executors report failures as results; this is the defence against one that throws.
        this.logger.error({
          ...describeUnexpected(error),
          msg: 'tool threw',
          gateway: gateway.name,
          tool: name,
        });
        result = { ok: false as const, error: 'The tool failed' };
      }
      this.logger.log({
        msg: 'gateway tool call',
        gateway: gateway.name,
        tool: name,
        ok: result.ok,
        durationMs: Date.now() - started,
      });
      return result.ok
        ? { content: [{ type: 'text', text: result.output }] }
        : { content: [{ type: 'text', text: result.error }], isError: true };
    });
    return server;
  }

  /**
   * The gateway's tools from the organization's catalogue. Memory tools belong to a user and
   * an assistant, which a gateway caller is not, so they are never exposed.
   */
  private async toolsOf(
    sdk: ServerSdk,
    gateway: McpGatewayEntity,
    signal: AbortSignal,
  ): Promise<ServerTool[]> {
    // No user tokens: the caller's access token is for this gateway only and is never passed on.
    const options = { signal };
    let tools: ServerTool[];
    try {
      tools =
        gateway.toolNames[0] === ALL_TOOLS
          ? await this.catalogue.resolveAll(gateway.organizationId, options)
          : await this.catalogue.resolve(gateway.organizationId, gateway.toolNames, options);
    } catch (error) {
      this.logger.error({
        ...describeUnexpected(error),
        msg: 'could not load gateway tools',
        gateway: gateway.name,
      });
      throw new sdk.McpError(sdk.ErrorCode.InternalError, 'The gateway could not load its tools');
    }
    return tools.filter((tool) => tool.kind !== 'memory');
  }
}

function toMcpTool(tool: ServerTool): Tool {
  const { name, description, parameters } = tool.definition;
  // Property schemas are JSON Schema objects; the catalogue types them loosely.
  return { name, description, inputSchema: parameters as Tool['inputSchema'] };
}
