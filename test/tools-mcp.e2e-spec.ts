import type { ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';
import {
  json,
  run,
  startLocalServer,
  toolsOf,
  type LocalServer,
  type ReceivedRequest,
} from './support/tools-local-servers.js';

/** The same two tools (and one that fails) on every test server, built with the SDK's McpServer. */
function orderTools(): McpServer {
  const server = new McpServer({ name: 'orders-test-server', version: '1.0.0' });
  server.registerTool(
    'lookup_order',
    { description: 'Looks up an order by id', inputSchema: { orderId: z.string() } },
    ({ orderId }) => ({ content: [{ type: 'text', text: `Order ${orderId} has shipped` }] }),
  );
  server.registerTool(
    'add',
    { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } },
    ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  );
  server.registerTool('explode', { description: 'Always fails' }, () => ({
    content: [{ type: 'text', text: 'inventory service down' }],
    isError: true,
  }));
  return server;
}

/** A stateless Streamable HTTP MCP server; with `requiredToken`, anything else is 401. */
function streamableServer(requiredToken?: string) {
  return startLocalServer(async (request, res, raw) => {
    if (requiredToken && request.headers.authorization !== `Bearer ${requiredToken}`) {
      return json(res, 401, { error: 'invalid_token' });
    }
    if (request.method !== 'POST') return void res.writeHead(405).end();
    const server = orderTools();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(raw, res, JSON.parse(request.body));
  });
}

/** An MCP server that speaks only the older HTTP+SSE transport. */
async function sseOnlyServer() {
  const sessions = new Map<string, SSEServerTransport>();
  return startLocalServer(async (request, res: ServerResponse, raw) => {
    const url = new URL(request.url, 'http://localhost');
    if (request.method === 'GET' && url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', res);
      sessions.set(transport.sessionId, transport);
      res.on('close', () => sessions.delete(transport.sessionId));
      await orderTools().connect(transport);
      return;
    }
    const transport = sessions.get(url.searchParams.get('sessionId') ?? '');
    if (request.method === 'POST' && url.pathname === '/messages' && transport) {
      await transport.handlePostMessage(raw, res, JSON.parse(request.body));
      return;
    }
    res.writeHead(405).end();
  });
}

/** The JSON-RPC methods a server received, e.g. `tools/list`. */
function rpcMethods(server: LocalServer): string[] {
  return server.requests.flatMap((request: ReceivedRequest) => {
    try {
      const body = JSON.parse(request.body) as { method?: string } | { method?: string }[];
      return (Array.isArray(body) ? body : [body]).map((message) => message.method ?? '(reply)');
    } catch {
      return [];
    }
  });
}

function count(server: LocalServer, method: string): number {
  return rpcMethods(server).filter((m) => m === method).length;
}

describe('tools: remote MCP servers through the official SDK client', () => {
  let app: TestApp;
  let orders: LocalServer;
  let secured: LocalServer;
  let legacy: LocalServer;
  let acme: SeededOrganization;
  let globex: SeededOrganization;
  let tools: ReturnType<typeof toolsOf>;

  beforeAll(async () => {
    orders = await streamableServer();
    secured = await streamableServer('good-token');
    legacy = await sseOnlyServer();
    app = await startTestApp({ SSRF_ALLOWLIST: '127.0.0.1' });
    acme = await app.seedOrganization('acme');
    globex = await app.seedOrganization('globex');
    tools = toolsOf(app);
    await tools.tool(acme.id, {
      name: 'orders',
      kind: 'mcp',
      description: 'Order system',
      config: { url: `${orders.origin}/mcp` },
    });
    await tools.tool(acme.id, {
      name: 'orders_fwd',
      kind: 'mcp',
      config: {
        url: `${orders.origin}/mcp`,
        forwardUserToken: true,
        toolPrefix: 'fwd_',
        allowedTools: ['lookup_order'],
      },
    });
    await tools.tool(acme.id, { name: 'legacy', kind: 'mcp', config: { url: `${legacy.origin}/sse` } });
    await tools.plugin(acme.id, {
      name: 'Secured CRM',
      oauth: { providerId: 'crm', requiredScopes: ['orders'], authUrl: 'https://crm.test/oauth/authorize' },
    });
    await tools.tool(acme.id, {
      name: 'crm',
      kind: 'mcp',
      plugin: 'Secured CRM',
      config: { url: `${secured.origin}/mcp`, transport: 'streamable-http' },
    });
  });
  afterAll(async () => {
    await app?.close();
    await Promise.all([orders, secured, legacy].map((server) => server?.close()));
  });

  it('lists the remote tools (prefixed with the server name) and calls them', async () => {
    const resolved = await tools.catalog.resolve(acme.id, ['orders']);
    expect(resolved.map((tool) => [tool.kind, tool.definition.name, tool.definition.description])).toEqual([
      ['mcp', 'orders_lookup_order', 'Looks up an order by id'],
      ['mcp', 'orders_add', 'Adds two numbers'],
      ['mcp', 'orders_explode', 'Always fails'],
    ]);
    expect(resolved[1].definition.parameters).toMatchObject({
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    });
    const [lookup, add, explode] = resolved;
    expect(await run(add, acme.id, { a: 2, b: 3 })).toEqual({ ok: true, output: '5' });
    expect(await run(lookup, acme.id, { orderId: 'A-17' })).toEqual({
      ok: true,
      output: 'Order A-17 has shipped',
    });
    expect(await run(explode, acme.id, {})).toEqual({ ok: false, error: 'inventory service down' });
    expect(orders.requests.every((request) => request.headers.authorization === undefined)).toBe(true);
  });

  it('reuses the tool list within MCP_TOOLS_CACHE_SECONDS instead of listing on every turn', async () => {
    await tools.catalog.resolve(acme.id, ['orders']);
    const listed = count(orders, 'tools/list');
    const again = await tools.catalog.resolve(acme.id, ['orders']);
    expect(count(orders, 'tools/list')).toBe(listed);
    const calls = count(orders, 'tools/call');
    await run(again[1], acme.id, { a: 1, b: 1 });
    expect(count(orders, 'tools/call')).toBe(calls + 1);
  });

  it('forwards x-user-token unchanged as a bearer token, and filters and prefixes as declared', async () => {
    const userToken = 'opaque.user-token.123';
    const before = orders.requests.length;
    const resolved = await tools.catalog.resolve(acme.id, ['orders_fwd'], { userToken });
    expect(resolved.map((tool) => tool.definition.name)).toEqual(['fwd_lookup_order']);
    expect(await run(resolved[0], acme.id, { orderId: 'B-2' }, { userToken })).toEqual({
      ok: true,
      output: 'Order B-2 has shipped',
    });
    const sent = orders.requests.slice(before);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((request) => request.headers.authorization === `Bearer ${userToken}`)).toBe(true);
  });

  it("lists again for another user's token: cached lists are per credential", async () => {
    await tools.catalog.resolve(acme.id, ['orders_fwd'], { userToken: 'token-of-ann' });
    const listed = count(orders, 'tools/list');
    await tools.catalog.resolve(acme.id, ['orders_fwd'], { userToken: 'token-of-bob' });
    expect(count(orders, 'tools/list')).toBe(listed + 1);
    expect(orders.requests.at(-1)!.headers.authorization).toBe('Bearer token-of-bob');
  });

  it('falls back to the HTTP+SSE transport for a server without Streamable HTTP', async () => {
    const resolved = await tools.catalog.resolve(acme.id, ['legacy']);
    expect(resolved.map((tool) => tool.definition.name)).toEqual([
      'legacy_lookup_order',
      'legacy_add',
      'legacy_explode',
    ]);
    expect(await run(resolved[1], acme.id, { a: 20, b: 22 })).toEqual({ ok: true, output: '42' });
    expect(legacy.requests.some((request) => request.method === 'GET' && request.url === '/sse')).toBe(true);
    expect(count(legacy, 'tools/call')).toBe(1);
  });

  it('offers one sign-in tool (oauth_required) when the plugin token is missing or refused', async () => {
    const expected = {
      ok: false,
      error: 'Secured CRM is unavailable until the user signs in',
      oauthRequired: {
        pluginId: expect.any(String),
        pluginName: 'Secured CRM',
        providerId: 'crm',
        requiredScopes: ['orders'],
        authUrl: 'https://crm.test/oauth/authorize',
      },
    };
    const before = secured.requests.length;
    const missing = await tools.catalog.resolve(acme.id, ['crm']);
    expect(missing.map((tool) => tool.definition.name)).toEqual(['crm']);
    expect(missing[0].definition.description).toMatch(/requires signing in to Secured CRM/);
    expect(await run(missing[0], acme.id, {})).toEqual(expected);
    expect(secured.requests.length).toBe(before);

    const refused = await tools.catalog.resolve(acme.id, ['crm'], { userTokens: { crm: 'stale-token' } });
    expect(refused.map((tool) => tool.definition.name)).toEqual(['crm']);
    expect(secured.requests.at(-1)!.headers.authorization).toBe('Bearer stale-token');
    expect(await run(refused[0], acme.id, {}, { userTokens: { crm: 'stale-token' } })).toEqual(expected);

    const accepted = await tools.catalog.resolve(acme.id, ['crm'], { userTokens: { crm: 'good-token' } });
    expect(accepted.map((tool) => tool.definition.name)).toEqual([
      'crm_lookup_order',
      'crm_add',
      'crm_explode',
    ]);
    expect(
      await run(accepted[0], acme.id, { orderId: 'C-3' }, { userTokens: { crm: 'good-token' } }),
    ).toEqual({
      ok: true,
      output: 'Order C-3 has shipped',
    });
    // The same tool, called on a later request without the token, asks for sign-in instead.
    expect(await run(accepted[0], acme.id, { orderId: 'C-3' })).toEqual(expected);
  });

  it('keeps an unreachable server visible as one tool whose result explains the failure', async () => {
    const gone = await startLocalServer(() => undefined);
    const url = `${gone.origin}/mcp`;
    await gone.close();
    await tools.tool(acme.id, { name: 'down', kind: 'mcp', config: { url } });
    const resolved = await tools.catalog.resolve(acme.id, ['down']);
    expect(resolved.map((tool) => tool.definition.name)).toEqual(['down']);
    const result = await run(resolved[0], acme.id, {});
    expect(result).toEqual({ ok: false, error: 'The MCP server down could not be reached (ECONNREFUSED)' });
  });

  it('gives up on a server that does not answer within its timeout', async () => {
    const silent = await startLocalServer(() => undefined);
    try {
      await tools.tool(acme.id, {
        name: 'silent',
        kind: 'mcp',
        config: { url: `${silent.origin}/mcp`, transport: 'streamable-http', timeoutMs: 300 },
      });
      const [placeholder] = await tools.catalog.resolve(acme.id, ['silent']);
      expect(placeholder.definition.description).toMatch(
        /currently unavailable: The tool did not answer within 0.3 seconds/,
      );
      expect(await run(placeholder, acme.id, {})).toEqual({
        ok: false,
        error: 'The tool did not answer within 0.3 seconds',
      });
    } finally {
      await silent.close();
    }
  });

  it("gives another organization none of these servers' tools", async () => {
    expect(await tools.catalog.resolve(globex.id, ['orders', 'orders_fwd', 'legacy', 'crm'])).toEqual([]);
  });

  it('lists afresh after the declaration changes', async () => {
    await tools.catalog.resolve(acme.id, ['orders']);
    const listed = count(orders, 'tools/list');
    await tools.tool(acme.id, {
      name: 'orders',
      kind: 'mcp',
      config: { url: `${orders.origin}/mcp`, toolPrefix: 'o_' },
    });
    const resolved = await tools.catalog.resolve(acme.id, ['orders']);
    expect(resolved.map((tool) => tool.definition.name)).toEqual(['o_lookup_order', 'o_add', 'o_explode']);
    expect(count(orders, 'tools/list')).toBe(listed + 1);
  });
});
