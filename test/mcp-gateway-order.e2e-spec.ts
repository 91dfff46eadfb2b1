import { call, type ApiReply } from './support/http.js';
import {
  INITIALIZE,
  MCP_HEADERS,
  seedGatewayWorld,
  startOrdersApi,
  type RecordingApi,
} from './support/mcp-gateway-fixtures.js';
import { startTestApp, type TestApp } from './support/test-app.js';
import {
  gatewayOidcEnv,
  startTestIdentityProvider,
  type TestIdentityProvider,
} from './support/test-identity-provider.js';

const BODY_LIMIT = 16 * 1024;
const NOT_JSON = '{"jsonrpc": "2.0", this is not JSON';
/** Larger than BODY_LIMIT and not JSON either: parsing it first would answer 413 or 400. */
const HUGE_NOT_JSON = `{${'x'.repeat(BODY_LIMIT * 4)}`;

/**
 * The gateway checks Origin, then the gateway, then the token, and reads the body only after
 * that: nothing an unauthenticated client sends is parsed. Body errors after authentication
 * are JSON-RPC error objects, as MCP clients expect.
 */
describe('MCP gateway: order of checks and the body', () => {
  let idp: TestIdentityProvider;
  let api: RecordingApi;
  let app: TestApp;

  beforeAll(async () => {
    idp = await startTestIdentityProvider({ alice: ['/acme/engineering'] });
    api = await startOrdersApi();
    app = await startTestApp({
      ...gatewayOidcEnv(idp),
      BODY_LIMIT: `${BODY_LIMIT}b`,
      MCP_ALLOWED_ORIGINS: 'http://localhost:6274',
      SSRF_ALLOWLIST: new URL(api.url).host,
    });
    await seedGatewayWorld(app, api);
  });
  afterAll(async () => {
    await app?.close();
    await Promise.all([idp?.close(), api?.close()]);
  });

  const post = (body: string, headers: Record<string, string> = {}, gateway = 'acme-ide') =>
    call(app.baseUrl, 'POST', `/mcp-gateway/${gateway}`, { headers: { ...MCP_HEADERS, ...headers }, body });

  const expectEnvelope = (res: ApiReply, status: number, code: string) => {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
    expect(Object.keys(res.body.error).sort()).toEqual(['code', 'message', 'type']);
  };

  const expectJsonRpcError = (res: ApiReply, status: number, code: number) => {
    expect({ status: res.status, body: res.body }).toEqual({
      status,
      body: { jsonrpc: '2.0', id: null, error: { code, message: expect.any(String) } },
    });
  };

  it.each([
    ['not JSON', NOT_JSON],
    ['over BODY_LIMIT', HUGE_NOT_JSON],
  ])('refuses a body %s by Origin, then gateway, then token, never by its content', async (_, body) => {
    const token = `Bearer ${await idp.mint()}`;
    expectEnvelope(
      await post(body, { origin: 'https://evil.example', authorization: token }),
      403,
      'origin_not_allowed',
    );
    expectEnvelope(await post(body, { authorization: token }, 'no-such-gateway'), 404, 'not_found');
    const anonymous = await post(body);
    expectEnvelope(anonymous, 401, 'missing_token');
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata="/);
    expectEnvelope(await post(body, { authorization: 'Bearer not-a-jwt' }), 401, 'invalid_token');
    const otherOrganization = `Bearer ${await idp.mint({ groups: ['/globex/sales'] })}`;
    expectEnvelope(await post(body, { authorization: otherOrganization }), 403, 'insufficient_scope');
  });

  describe('after authentication', () => {
    let authorization: string;
    beforeAll(async () => {
      authorization = `Bearer ${await idp.mint()}`;
    });

    it('answers JSON that does not parse with the JSON-RPC parse error -32700', async () => {
      expectJsonRpcError(await post(NOT_JSON, { authorization }), 400, -32700);
    });

    it('answers a body over BODY_LIMIT with 413 and a JSON-RPC error', async () => {
      const big = JSON.stringify({
        ...INITIALIZE,
        params: { ...INITIALIZE.params, pad: 'x'.repeat(BODY_LIMIT) },
      });
      expectJsonRpcError(await post(big, { authorization }), 413, -32000);
    });

    it('refuses text no service could store, and deep nesting, as an invalid JSON-RPC request (-32600)', async () => {
      const toolCall = (args: string) =>
        `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"order_status","arguments":${args}}}`;
      const before = api.received.length;
      const nul = await post(toolCall('{"id":"9\\u0000"}'), { authorization });
      expectJsonRpcError(nul, 400, -32600);
      expect(nul.body.error.message).toContain('params.arguments.id must not contain the NUL character');
      const deep = await post(toolCall(`{"id":${'['.repeat(5000)}${']'.repeat(5000)}}`), { authorization });
      expectJsonRpcError(deep, 400, -32600);
      expect(api.received.length).toBe(before);
    });

    it('leaves other media types to the MCP transport (415) and serves a valid message', async () => {
      const text = await call(app.baseUrl, 'POST', '/mcp-gateway/acme-ide', {
        headers: { ...MCP_HEADERS, 'content-type': 'text/plain', authorization },
        body: JSON.stringify(INITIALIZE),
      });
      expectJsonRpcError(text, 415, -32000);
      const ok = await post(JSON.stringify(INITIALIZE), { authorization });
      expect(ok.status).toBe(200);
      expect(ok.body.result.serverInfo).toMatchObject({ name: 'switchboard' });
      // The same route under Express's case-insensitive, trailing-slash matching.
      const variant = await call(app.baseUrl, 'POST', '/MCP-Gateway/acme-ide/', {
        headers: { ...MCP_HEADERS, authorization },
        body: NOT_JSON,
      });
      expectJsonRpcError(variant, 400, -32700);
    });
  });
});
