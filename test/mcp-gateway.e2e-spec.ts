import { once } from 'node:events';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { call } from './support/http.js';
import {
  INITIALIZE,
  MCP_HEADERS,
  seedGatewayWorld,
  startAdminOriginProxy,
  startOrdersApi,
  type AdminOriginProxy,
  type RecordingApi,
} from './support/mcp-gateway-fixtures.js';
import { startTestApp, type TestApp } from './support/test-app.js';
import {
  gatewayOidcEnv,
  startTestIdentityProvider,
  type TestIdentityProvider,
} from './support/test-identity-provider.js';

/**
 * The MCP gateway as an IDE meets it: a real OpenID provider, the admin origin proxying the
 * gateway to the backend, the official MCP SDK client, and a real REST API behind the tool.
 */
describe('MCP gateway: discovery, sign-in and tools', () => {
  let idp: TestIdentityProvider;
  let proxy: AdminOriginProxy;
  let api: RecordingApi;
  let app: TestApp;
  const clients: Client[] = [];

  /** The gateway URL as IDEs are configured with it: on the admin origin. */
  const gatewayUrl = (name: string) => `${proxy.origin}/mcp-gateway/${name}`;
  const metadataUrl = (name: string) => `${gatewayUrl(name)}/.well-known/oauth-protected-resource`;

  beforeAll(async () => {
    idp = await startTestIdentityProvider({ alice: ['/acme/engineering'], bob: ['/globex/sales'] });
    proxy = await startAdminOriginProxy();
    api = await startOrdersApi();
    app = await startTestApp({
      ...gatewayOidcEnv(idp),
      PUBLIC_ADMIN_ORIGIN: proxy.origin,
      MCP_ALLOWED_ORIGINS: 'http://localhost:6274',
      SSRF_ALLOWLIST: new URL(api.url).host,
      // Far beyond the test timeout: only the client's disconnect can end the slow call below.
      TOOL_TIMEOUT_SECONDS: '600',
    });
    proxy.setBackend(app.baseUrl);
    await seedGatewayWorld(app, api);
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await app?.close();
    await Promise.all([idp?.close(), proxy?.close(), api?.close()]);
  });

  /** An MCP SDK client holding a bearer token, as after any OAuth flow. */
  async function connectWithToken(url: string, token: string): Promise<Client> {
    const client = new Client({ name: 'e2e-ide', version: '1.0.0' });
    clients.push(client);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    return client;
  }

  it('publishes Protected Resource Metadata at both locations, with the resource on the admin origin', async () => {
    const expected = {
      resource: gatewayUrl('acme-ide'),
      authorization_servers: [idp.issuer],
      scopes_supported: [idp.scope],
      bearer_methods_supported: ['header'],
      resource_name: expect.any(String),
    };
    for (const base of [proxy.origin, app.baseUrl]) {
      const inside = await call(base, 'GET', '/mcp-gateway/acme-ide/.well-known/oauth-protected-resource');
      expect(inside.status).toBe(200);
      expect(inside.body).toEqual(expected);
      const wellKnown = await call(base, 'GET', '/.well-known/oauth-protected-resource/mcp-gateway/acme-ide');
      expect(wellKnown.status).toBe(200);
      expect(wellKnown.body).toEqual(expected);
      expect(wellKnown.headers.get('access-control-allow-origin')).toBe('*');
    }
  });

  it('answers an unknown gateway with 404 not_found, metadata included', async () => {
    const post = await call(app.baseUrl, 'POST', '/mcp-gateway/nobody', {
      body: INITIALIZE,
      headers: MCP_HEADERS,
    });
    expect(post.status).toBe(404);
    expect(post.body.error).toEqual({
      type: 'not_found_error',
      code: 'not_found',
      message: expect.any(String),
    });
    const metadata = await call(
      app.baseUrl,
      'GET',
      '/.well-known/oauth-protected-resource/mcp-gateway/nobody',
    );
    expect(metadata.status).toBe(404);
  });

  it('challenges a request without a token with the absolute metadata URL on the admin origin', async () => {
    const res = await call(proxy.origin, 'POST', '/mcp-gateway/acme-ide', {
      body: INITIALIZE,
      headers: MCP_HEADERS,
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadataUrl('acme-ide')}"`);
    expect(res.body.error).toMatchObject({ type: 'authentication_error', code: 'missing_token' });
  });

  it('lets an MCP client discover the provider, sign in with Authorization Code + PKCE, and use the tools', async () => {
    let tokens: OAuthTokens | undefined;
    let verifier = '';
    let callback: Promise<URL> | undefined;
    const authProvider: OAuthClientProvider = {
      redirectUrl: 'http://127.0.0.1:53682/callback',
      clientMetadata: {
        client_name: 'e2e IDE',
        redirect_uris: ['http://127.0.0.1:53682/callback'],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
      // Pre-registered public client, as with Keycloak (no dynamic registration).
      clientInformation: (): OAuthClientInformationMixed => ({ client_id: idp.clientId }),
      tokens: () => tokens,
      saveTokens: (saved) => void (tokens = saved),
      saveCodeVerifier: (saved) => void (verifier = saved),
      codeVerifier: () => verifier,
      // The "browser": alice signs in and consents; the provider redirects to the loopback URL.
      redirectToAuthorization: (url) => void (callback = idp.signIn(url.href, 'alice')),
    };

    const first = new Client({ name: 'e2e-ide', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(gatewayUrl('acme-ide')), { authProvider });
    await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(callback).toBeDefined();
    const redirect = await callback!;
    expect(`${redirect.origin}${redirect.pathname}`).toBe('http://127.0.0.1:53682/callback');
    const authorizationRequest = redirect.searchParams;
    expect(authorizationRequest.get('code')).toEqual(expect.any(String));
    await transport.finishAuth(authorizationRequest.get('code')!);
    expect(tokens?.access_token).toEqual(expect.any(String));

    const client = new Client({ name: 'e2e-ide', version: '1.0.0' });
    clients.push(client);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(gatewayUrl('acme-ide')), { authProvider }),
    );
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    await expect(client.ping()).resolves.toEqual({});

    const { tools } = await client.listTools();
    expect(tools).toEqual([
      {
        name: 'order_status',
        description: 'Status of an acme order',
        inputSchema: {
          type: 'object',
          properties: { id: { type: 'string', description: 'Order number' } },
          required: ['id'],
        },
      },
    ]);

    const before = api.received.length;
    const result = await client.callTool({ name: 'order_status', arguments: { id: 'A-42' } });
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: expect.stringContaining('shipped') }]);
    expect(JSON.parse((result.content as { text: string }[])[0].text)).toEqual({
      id: 'A-42',
      status: 'shipped',
    });
    // The tool reached its API; the caller's token did not travel with it.
    const reached = api.received.slice(before);
    expect(reached.map((r) => r.path)).toEqual(['/orders/A-42']);
    expect(reached[0].headers.authorization).toBeUndefined();
    expect(JSON.stringify(reached[0].headers)).not.toContain(tokens!.access_token);
  });

  it('accepts a token from the Authorization Code + PKCE flow sent straight to the backend', async () => {
    const { access_token, token_type } = await idp.authorizationCodeFlow({
      user: 'alice',
      resource: gatewayUrl('acme-ide'),
    });
    expect(token_type).toBe('Bearer');
    const client = await connectWithToken(`${app.baseUrl}/mcp-gateway/acme-ide`, access_token);

    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['order_status']);

    const failed = await client.callTool({ name: 'order_status', arguments: { id: 'broken' } });
    expect(failed.isError).toBe(true);
    expect(failed.content).toEqual([{ type: 'text', text: expect.stringContaining('500') }]);

    // A tool of the organization that this gateway does not expose is unknown here.
    await expect(client.callTool({ name: 'internal_report', arguments: { id: '1' } })).rejects.toThrow(
      /Unknown tool/,
    );
  });

  it('keeps each organization to its own gateway, from both sides', async () => {
    const bob = (await idp.authorizationCodeFlow({ user: 'bob', resource: gatewayUrl('globex-ide') }))
      .access_token;
    const alice = (await idp.authorizationCodeFlow({ user: 'alice', resource: gatewayUrl('acme-ide') }))
      .access_token;
    const before = api.received.length;

    for (const [token, gateway] of [
      [bob, 'acme-ide'],
      [alice, 'globex-ide'],
    ] as const) {
      const res = await call(app.baseUrl, 'POST', `/mcp-gateway/${gateway}`, {
        headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` },
        body: {
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: { name: 'order_status', arguments: { id: 'x' } },
        },
      });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ type: 'authentication_error', code: 'insufficient_scope' });
      expect(res.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
      expect(res.headers.get('www-authenticate')).toContain(`resource_metadata="${metadataUrl(gateway)}"`);
    }
    expect(api.received.length).toBe(before);

    // bob's own gateway exposes every globex tool, and none of acme's.
    const client = await connectWithToken(`${app.baseUrl}/mcp-gateway/globex-ide`, bob);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['globex_orders']);
  });

  it('cancels a running tool call when the client disconnects', async () => {
    const arrived = once(api.events, 'slow-arrived');
    const closed = once(api.events, 'slow-closed');
    const client = new AbortController();
    const pending = fetch(`${app.baseUrl}/mcp-gateway/acme-ide`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${await idp.mint()}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'order_status', arguments: { id: 'slow' } },
      }),
      signal: client.signal,
    }).catch((error: unknown) => error);
    await arrived;
    client.abort();
    // The tool's own request is abandoned at once, not after the tool's time limit.
    await closed;
    expect(((await pending) as { name?: string }).name).toBe('AbortError');
  });

  it('answers GET and DELETE with 405 and Allow: POST (stateless, no SSE stream, no session)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await call(app.baseUrl, method, '/mcp-gateway/acme-ide', {
        headers: { accept: 'text/event-stream' },
      });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(res.body.error).toMatchObject({ code: 'method_not_allowed' });
    }
  });

  it('refuses an Origin that is not allowed with 403, and serves an allowed one with CORS headers', async () => {
    const token = await idp.mint();
    const headers = { ...MCP_HEADERS, authorization: `Bearer ${token}` };

    const foreign = await call(app.baseUrl, 'POST', '/mcp-gateway/acme-ide', {
      headers: { ...headers, origin: 'https://evil.example' },
      body: INITIALIZE,
    });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error).toMatchObject({ code: 'origin_not_allowed' });
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();

    const allowed = await call(app.baseUrl, 'POST', '/mcp-gateway/acme-ide', {
      headers: { ...headers, origin: 'http://localhost:6274' },
      body: INITIALIZE,
    });
    expect(allowed.status).toBe(200);
    expect(allowed.body.result.serverInfo).toMatchObject({ name: 'switchboard' });
    expect(allowed.headers.get('access-control-allow-origin')).toBe('http://localhost:6274');
    expect(allowed.headers.get('access-control-expose-headers')).toContain('WWW-Authenticate');

    // The admin origin itself is always allowed.
    const admin = await call(app.baseUrl, 'POST', '/mcp-gateway/acme-ide', {
      headers: { ...headers, origin: proxy.origin },
      body: INITIALIZE,
    });
    expect(admin.status).toBe(200);

    const preflight = await call(app.baseUrl, 'OPTIONS', '/mcp-gateway/acme-ide', {
      headers: { origin: 'http://localhost:6274', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('Authorization');
    const badPreflight = await call(app.baseUrl, 'OPTIONS', '/mcp-gateway/acme-ide', {
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(badPreflight.status).toBe(403);

    // Without an Origin (desktop clients) the request passes.
    const desktop = await call(app.baseUrl, 'POST', '/mcp-gateway/acme-ide', { headers, body: INITIALIZE });
    expect(desktop.status).toBe(200);
    expect(desktop.headers.get('mcp-session-id')).toBeNull();
  });
});
