import { EventEmitter } from 'node:events';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpGatewaysService } from '../../src/mcp-gateway/mcp-gateways.service.js';
import { ToolsService } from '../../src/tools/tools.service.js';
import { startTestApp, type TestApp } from './test-app.js';
import {
  closeServer,
  startTestIdentityProvider,
  type TestIdentityProvider,
  type TestUsers,
} from './test-identity-provider.js';

/** A JSON-RPC `initialize` as MCP clients send it first. */
export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '1.0.0' } },
};

/** Headers the Streamable HTTP transport requires on a POST. */
export const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

export interface RecordingApi {
  url: string;
  /** Every request the API received: path and headers. */
  received: { path: string; headers: IncomingHttpHeaders }[];
  /** `slow-arrived` when `/orders/slow` is requested (it never answers), `slow-closed` when its caller gives up. */
  events: EventEmitter;
  close(): Promise<void>;
}

/**
 * The REST API behind the test's tool: `GET /orders/<id>` answers the order, `/orders/broken`
 * fails with 500, `/orders/slow` never answers. It records what reached it, to prove what the gateway sends (and does not).
 */
export async function startOrdersApi(): Promise<RecordingApi> {
  const received: RecordingApi['received'] = [];
  const events = new EventEmitter();
  const server = createServer((req, res) => {
    received.push({ path: req.url ?? '', headers: req.headers });
    const id = /^\/orders\/([^/?]+)/.exec(req.url ?? '')?.[1];
    if (id === 'slow') {
      res.on('close', () => events.emit('slow-closed'));
      events.emit('slow-arrived');
      return;
    }
    if (id === 'broken') {
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"database on fire"}');
      return;
    }
    if (!id) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: decodeURIComponent(id), status: 'shipped' }));
  });
  const url = await listen(server);
  return { url, received, events, close: () => closeServer(server) };
}

export interface AdminOriginProxy {
  origin: string;
  /** Points the proxy at the backend once it runs. */
  setBackend(baseUrl: string): void;
  close(): Promise<void>;
}

/**
 * The admin origin in front of the backend, as deployed: it forwards `/mcp-gateway/*` and
 * `/.well-known/oauth-protected-resource/*` unchanged and nothing else.
 */
export async function startAdminOriginProxy(): Promise<AdminOriginProxy> {
  let backend: URL | undefined;
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    const forwarded =
      path.startsWith('/mcp-gateway/') || path.startsWith('/.well-known/oauth-protected-resource/');
    if (!backend || !forwarded) return void res.writeHead(404).end();
    const upstream = httpRequest(
      {
        host: backend.hostname,
        port: backend.port,
        method: req.method,
        path,
        headers: { ...req.headers, host: backend.host },
      },
      (reply) => {
        res.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  const origin = await listen(server);
  return {
    origin,
    setBackend: (baseUrl) => (backend = new URL(baseUrl)),
    close: () => closeServer(server),
  };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export interface GatewayWorld {
  acme: { id: string; gateway: string };
  globex: { id: string; gateway: string };
}

/**
 * Two organizations, each with a REST tool on the orders API and a gateway: `acme-ide` exposes
 * `order_status` only (acme also has `internal_report`, not exposed); `globex-ide` exposes all
 * of globex's tools.
 */
export async function seedGatewayWorld(app: TestApp, api: RecordingApi): Promise<GatewayWorld> {
  const tools = app.running.app.get(ToolsService);
  const gateways = app.running.app.get(McpGatewaysService);
  const orderStatus = (description: string) => ({
    kind: 'rest',
    description,
    config: {
      method: 'GET',
      urlTemplate: `${api.url}/orders/{id}`,
      parameters: {
        type: 'object',
        properties: { id: { type: 'string', description: 'Order number' } },
        required: ['id'],
      },
    },
  });
  const acme = await app.seedOrganization('acme');
  await tools.upsertTool(acme.id, { name: 'order_status', ...orderStatus('Status of an acme order') });
  await tools.upsertTool(acme.id, { name: 'internal_report', ...orderStatus('Not exposed') });
  await gateways.create(acme.id, { name: 'acme-ide', toolNames: ['order_status'] });
  const globex = await app.seedOrganization('globex');
  await tools.upsertTool(globex.id, { name: 'globex_orders', ...orderStatus('Status of a globex order') });
  await gateways.create(globex.id, { name: 'globex-ide', toolNames: ['*'] });
  return { acme: { id: acme.id, gateway: 'acme-ide' }, globex: { id: globex.id, gateway: 'globex-ide' } };
}

export interface GatewayStack {
  idp: TestIdentityProvider;
  api: RecordingApi;
  app: TestApp;
  world: GatewayWorld;
  /** Stops the service, then the provider and the API. */
  close(): Promise<void>;
}

/**
 * The gateway's test world: an identity provider with `users`, the orders API, the service with
 * `env(idp)` (and the API allowed past the SSRF guard), seeded by `seedGatewayWorld`.
 */
export async function startGatewayStack(
  env: (idp: TestIdentityProvider) => Record<string, string>,
  users: TestUsers = { alice: ['/acme/engineering'] },
): Promise<GatewayStack> {
  let idp: TestIdentityProvider | undefined;
  let api: RecordingApi | undefined;
  let app: TestApp | undefined;
  const close = async (): Promise<void> => {
    await app?.close();
    await Promise.all([idp?.close(), api?.close()]);
  };
  try {
    idp = await startTestIdentityProvider(users);
    api = await startOrdersApi();
    app = await startTestApp({ SSRF_ALLOWLIST: new URL(api.url).host, ...env(idp) });
    const world = await seedGatewayWorld(app, api);
    return { idp, api, app, world, close };
  } catch (error) {
    await close();
    throw error;
  }
}
