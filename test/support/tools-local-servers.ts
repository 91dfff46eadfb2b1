import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ToolCatalogService } from '../../src/tools/tool-catalog.service.js';
import type { ServerTool, ToolExecutionContext } from '../../src/tools/server-tool.js';
import { ToolsService, type PluginInput, type ToolInput } from '../../src/tools/tools.service.js';
import type { TestApp } from './test-app.js';

export interface ReceivedRequest {
  method: string;
  /** Path and query as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type LocalHandler = (
  request: ReceivedRequest,
  res: ServerResponse,
  raw: IncomingMessage,
) => void | Promise<void>;

export interface LocalServer {
  port: number;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** Everything received, in order. */
  requests: ReceivedRequest[];
  close(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1, port 0, standing in for an external service (REST API,
 * search engine, MCP server). It records every request it receives. `passRaw` hands the
 * unread request to the handler (for transports that read the body themselves).
 */
export async function startLocalServer(
  handler: LocalHandler,
  options: { passRaw?: boolean } = {},
): Promise<LocalServer> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    const record = (body: string) => {
      const request = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body };
      requests.push(request);
      Promise.resolve(handler(request, res, req)).catch(() => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    };
    if (options.passRaw) {
      record('');
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => record(Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        // Requests a test left hanging (timeouts, SSE streams) must not keep the server open.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** The tool catalogue of a test app, with helpers to declare tools as an administrator would. */
export function toolsOf(app: TestApp) {
  const catalog = app.running.app.get(ToolCatalogService);
  const admin = app.running.app.get(ToolsService);
  return {
    catalog,
    async plugin(organizationId: string, input: PluginInput) {
      return (await admin.upsertPlugin(organizationId, input)).plugin;
    },
    async tool(organizationId: string, input: ToolInput) {
      return (await admin.upsertTool(organizationId, input)).tool;
    },
    /** Resolves one name and expects exactly one tool with that name. */
    async one(
      organizationId: string,
      name: string,
      credentials: Omit<ToolExecutionContext, 'organizationId' | 'signal'> = {},
    ) {
      const tools = await catalog.resolve(organizationId, [name], credentials);
      const tool = tools.find((candidate) => candidate.definition.name === name);
      if (!tool)
        throw new Error(`tool ${name} not resolved (got ${tools.map((t) => t.definition.name).join(', ')})`);
      return tool;
    },
  };
}

/** What a turn passes to an executor. */
export function context(
  organizationId: string,
  credentials: Omit<ToolExecutionContext, 'organizationId' | 'signal'> = {},
): ToolExecutionContext {
  return { organizationId, signal: new AbortController().signal, ...credentials };
}

export function run(
  tool: ServerTool,
  organizationId: string,
  args: Record<string, unknown>,
  credentials = {},
) {
  return tool.execute(args, context(organizationId, credentials));
}
